-- Refresh the days (grain 'day') of `endpoint_call_periods` for the UTC days holding the hours [{start}, {end}), by
-- merging their hours' states (grain 'hour'; refreshed just before by the same tick); the day's 5 slowest calls are
-- the slowest of its hours' 5 slowest.
INSERT INTO endpoint_call_periods
WITH groupArraySortedArray(5)(arrayMap((d, e, t, s, x) -> (-d, e, t, s, x),
                                       slow_ms, slow_event, slow_ts, slow_status, slow_description)) AS slowest
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, environment, release, browser, source,
       method, path,
       sum(calls), sum(loads), sum(duration_sum), sumMap(dur_hist.1, dur_hist.2), sum(s2xx), sum(s3xx), sum(s4xx),
       sum(s5xx), sum(no_status), sum(bytes_sum), sum(bytes_n), max(max_per_load), groupUniqArrayArray(10)(pages),
       arrayMap(x -> -x.1, slowest), arrayMap(x -> x.2, slowest), arrayMap(x -> x.3, slowest),
       arrayMap(x -> x.4, slowest), arrayMap(x -> x.5, slowest),
       {materialized_at:DateTime64(6, 'UTC')}
FROM endpoint_call_periods FINAL
WHERE ${hours_of_days}
GROUP BY org_id, project_id, day, environment, release, browser, source, method, path
