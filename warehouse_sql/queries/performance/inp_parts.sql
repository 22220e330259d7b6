-- The INP view's interactions in one read (stacklens/performance/inp/reads.py): over the project's interactions in
-- [since, until) and the filters ('' = any; {page} a route or ''), read as the state rows of the window (macro
-- inp_window: `inp_periods` for its whole hours and days, `inp_interactions` for its partial edge hours), three
-- grouping sets (counts `n`, `n_attributed`, `n_scripts`; script time `first_sum`, `third_sum`) —
--   per page (`element` and `kind` ''): interactions, those with attribution and with script data, INP p75 and the
--     p75 of its input delay, processing time, presentation delay and third-party script time (over the 1 % log
--     histograms with quantileExactWeightedInterpolated, as every reader of these metrics takes them: within 0.5 %
--     of the exact percentile; NULL without samples, never 0), and the first- and third-party script time of the
--     interactions with script data and how many of them a third party's script ran in;
--   per page, target and type: the same counts and p75s;
--   per browser (`by_browser` 1, page ''): interactions, with attribution, with script data.
-- Read with pread on the reading thread: the engine's default for local files hands each read to a thread pool and
-- back, which for the few granules of these reads was ~25 % of their CPU (bench/RESULTS.md, "INP").
SELECT page, if(grouping(target) = 0, target, '') AS element, if(grouping(target) = 0, type, '') AS kind,
       grouping(browser) = 0 AS by_browser, if(grouping(browser) = 0, browser, '') AS browser_name,
       sum(interactions) AS n, sum(attributed) AS n_attributed, sum(with_scripts) AS n_scripts,
       if(n > 0, quantileExactWeightedInterpolatedArray(0.75)(inp_hist.1, inp_hist.2), NULL) AS inp_p75,
       if(n_attributed > 0, quantileExactWeightedInterpolatedArray(0.75)(input_delay_hist.1, input_delay_hist.2),
          NULL) AS input_delay_p75,
       if(n_attributed > 0, quantileExactWeightedInterpolatedArray(0.75)(processing_hist.1, processing_hist.2),
          NULL) AS processing_p75,
       if(n_attributed > 0, quantileExactWeightedInterpolatedArray(0.75)(presentation_hist.1, presentation_hist.2),
          NULL) AS presentation_p75,
       if(sum(length(third_party_hist.2)) > 0,
          quantileExactWeightedInterpolatedArray(0.75)(third_party_hist.1, third_party_hist.2), NULL) AS third_party_p75,
       sum(first_ms) AS first_sum, sum(third_ms) AS third_sum, sum(third_interactions) AS third_party_interactions
FROM ${inp_window}
GROUP BY GROUPING SETS ((page), (page, target, type), (browser))
ORDER BY by_browser, page, element != '', n DESC, element
LIMIT 1000
SETTINGS local_filesystem_read_method = 'pread', do_not_merge_across_partitions_select_final = 1, ${view_settings}
