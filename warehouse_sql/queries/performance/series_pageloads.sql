-- One metric window evaluated at many times (a budget's daily history, an alert rule's 30-day preview) in one read
-- of `pageload_periods`, the states the page-load views read (stacklens/performance/window_values.py). Each
-- point's window is tiled as window_states.sql tiles it (ViewFilters.periods with minutes). The state rows of
-- the scope (page LIKE pattern) and filters ('' = any) are first merged per period — sums added, histograms with
-- sumMap: the same (value, count) pairs, so the same percentiles as a merge of the rows themselves — then each
-- period counts for the points whose tiling holds it: `members` (aligned with `periods`) for the hours, days and
-- blocks of days, and for a one-minute period the `minute_ranges` (point, hour, first minute, end) of the points'
-- partial edge hours holding it. `{count}`, `{total}` and `{histogram}` are the metric's columns (written by
-- stacklens/performance/window_values.py from its table of metrics: constant column names only).
SELECT point, sum(samples) AS samples, sum(total) AS total,
       quantilesExactWeightedInterpolatedArray(0.5, 0.75, 0.9, 0.95, 0.99)(hist.1, hist.2) AS quantiles
FROM
(
    SELECT grain, start, sum({count}) AS samples, sum({total}) AS total, sumMap({histogram}.1, {histogram}.2) AS hist
    FROM pageload_periods FINAL
    WHERE project_id = {project_id:UInt64}
      AND ${series_periods}
      AND page LIKE {pattern:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
    GROUP BY grain, start
)
ARRAY JOIN ${series_points} AS point
GROUP BY point
SETTINGS ${view_settings}
