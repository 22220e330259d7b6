-- One page's whole window (macro pageload_window, page set; blocks of days): the distribution counts of
-- distribution.sql (`dist`, key metric * 2^32 + bucket) and what samples.sql reads for the sample page loads
-- (3 fastest, 3 slowest, load-time median). The page detail reads it beside page_detail.sql.
SELECT sumMap(dist.1, dist.2) AS dist,
       groupArraySortedArray(3)(fastest) AS fastest,
       arrayMap(x -> (-x.1, x.2, x.3, x.4),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest))) AS slowest,
       quantileExactWeightedInterpolatedArray(0.5)(load_hist.1, load_hist.2) AS load_p50
FROM ${pageload_window}
SETTINGS ${view_settings}
