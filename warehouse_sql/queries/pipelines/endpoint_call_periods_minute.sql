-- Refresh the minutes (grain 'minute') of `endpoint_call_periods` for the hours in [{start}, {end}) from
-- `endpoint_facts` (refreshed just before by the same tick): per minute, filter dimensions and endpoint, what
-- endpoint_call_periods_hour.sql keeps per hour (the endpoint_call_states aggregates and the 5 slowest calls). The
-- endpoint views read them for the partial hours at their window's edges (macro endpoint_window), so a window is one
-- read of the periods that tile it; the days and blocks are merged from the hours, never from these.
INSERT INTO endpoint_call_periods
WITH groupArraySorted(5)((-duration_ms, toString(tx), ts, status_code, description)) AS slowest
SELECT org_id, project_id, 'minute' AS grain, toStartOfMinute(ts) AS minute, environment, release, browser, source,
       method, path,
       ${endpoint_call_states},
       arrayMap(x -> -x.1, slowest), arrayMap(x -> x.2, slowest), arrayMap(x -> x.3, slowest),
       arrayMap(x -> x.4, slowest), arrayMap(x -> x.5, slowest),
       {materialized_at:DateTime64(6, 'UTC')}
FROM endpoint_facts FINAL
WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, minute, environment, release, browser, source, method, path
