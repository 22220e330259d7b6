-- Refresh the blocks of 2, 4, 8 and 16 days (grains 'days_2' … 'days_16') of `endpoint_call_periods` that hold the
-- days of the hours [{start}, {end}), by merging their days (grain 'day', refreshed just before by the same tick); a
-- block's 5 slowest calls are the slowest of its days' 5 slowest. The days read are those of the 16-day blocks
-- around the range, so every smaller block in it is whole.
INSERT INTO endpoint_call_periods
WITH groupArraySortedArray(5)(arrayMap((d, e, t, x, y) -> (-d, e, t, x, y),
                                       slow_ms, slow_event, slow_ts, slow_status, slow_description)) AS slowest
SELECT org_id, project_id, ${block_period}, environment, release, browser, source, method, path,
       sum(calls), sum(loads), sum(duration_sum), sumMap(dur_hist.1, dur_hist.2), sum(s2xx), sum(s3xx), sum(s4xx),
       sum(s5xx), sum(no_status), sum(bytes_sum), sum(bytes_n), max(max_per_load), groupUniqArrayArray(10)(pages),
       arrayMap(x -> -x.1, slowest), arrayMap(x -> x.2, slowest), arrayMap(x -> x.3, slowest),
       arrayMap(x -> x.4, slowest), arrayMap(x -> x.5, slowest),
       {materialized_at:DateTime64(6, 'UTC')}
FROM endpoint_call_periods FINAL
${days_of_blocks}
GROUP BY org_id, project_id, block_grain, block, environment, release, browser, source, method, path
