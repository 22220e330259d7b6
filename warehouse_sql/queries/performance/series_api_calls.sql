-- One API window (response time, or error rate) evaluated at many times in one read of `endpoint_call_periods`
-- (the server side's calls, `path` LIKE the pattern), as series_pageloads.sql reads the page loads: rows merged per
-- period (calls and `{total}` added — the durations, or the calls answered 4xx or 5xx for error_pct, written by
-- window_series.py — `dur_hist` with sumMap), then counted for the points whose tiling holds the period.
SELECT point, sum(samples) AS samples, sum(total) AS total,
       quantilesExactWeightedInterpolatedArray(0.5, 0.75, 0.9, 0.95, 0.99)(
           arrayMap(k -> ${duration_hist_value}, hist.1), hist.2) AS quantiles
FROM
(
    SELECT grain, start, sum(calls) AS samples, sum({total}) AS total, sumMap(dur_hist.1, dur_hist.2) AS hist
    FROM endpoint_call_periods FINAL
    WHERE project_id = {project_id:UInt64} AND source = 'server'
      AND ${series_periods}
      AND path LIKE {pattern:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
    GROUP BY grain, start
)
ARRAY JOIN ${series_points} AS point
GROUP BY point
SETTINGS ${view_settings}
