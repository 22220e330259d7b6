-- The sample page loads of the window and filters (one page), read from the states (macro pageload_window: whole
-- days, hours and the minutes of the partial edge hours): the 3 fastest and the 3 slowest by load time (ties by
-- event id; exact: each state keeps its own 3 of each, migration 0139) as (load time, event id, start, score), and
-- the median of the merged load-time histogram (within 0.5 % of the exact one), whose nearest page loads
-- sample_medians.sql then picks. page_detail.sql returns the same with the rest of the page detail.
SELECT groupArraySortedArray(3)(fastest) AS fastest,
       arrayMap(x -> (-x.1, x.2, x.3, x.4),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest))) AS slowest,
       quantileExactWeightedInterpolatedArray(0.5)(load_hist.1, load_hist.2) AS load_p50
FROM ${pageload_window}
SETTINGS ${view_settings}
