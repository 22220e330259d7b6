-- Per ISO week (week_start = its Monday) and, when by_page = 1, per page, over the page loads of the window and
-- filters (macro pageload_window: a UTC day lies in one ISO week): views, load average and p75, LCP p75 (merged
-- 1 % log histograms) and the mean score.
SELECT if({by_page:UInt8} = 1, page, '') AS key, toMonday(day) AS week_start,
       toISOYear(day) AS iso_year, toISOWeek(day) AS iso_week, sum(views) AS views,
       sum(load_sum) / views AS load_avg,
       quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
       quantileExactWeightedInterpolatedArray(0.75)(lcp_hist.1, lcp_hist.2) AS lcp_p75, sum(lcp_n) AS lcp_n,
       sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n
FROM ${pageload_window}
GROUP BY key, week_start, iso_year, iso_week
ORDER BY key, week_start
LIMIT 10000
SETTINGS ${view_settings}
