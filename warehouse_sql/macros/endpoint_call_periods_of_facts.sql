-- Refresh the periods of grain `${grain}` ('minute' or 'hour') of `endpoint_call_periods` for the hours in
-- [{start}, {end}) from `endpoint_facts` (refreshed just before by the same tick): per period, filter dimensions and
-- endpoint, the aggregates of the endpoint_call_states macro and the period's 5 slowest calls (duration
-- descending, then event id). The one statement of queries/pipelines/endpoint_call_periods_minute.sql and
-- endpoint_call_periods_hour.sql, so the two grains cannot drift.
INSERT INTO endpoint_call_periods
WITH groupArraySorted(5)((-duration_ms, toString(tx), ts, status_code, description)) AS slowest
SELECT org_id, project_id, '${grain}' AS grain, toStartOfInterval(ts, INTERVAL 1 ${grain}) AS ${grain}, environment,
       release, browser, source, method, path,
       ${endpoint_call_states},
       arrayMap(x -> -x.1, slowest), arrayMap(x -> x.2, slowest), arrayMap(x -> x.3, slowest),
       arrayMap(x -> x.4, slowest), arrayMap(x -> x.5, slowest),
       {materialized_at:DateTime64(6, 'UTC')}
FROM endpoint_facts FINAL
WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, ${grain}, environment, release, browser, source, method, path
