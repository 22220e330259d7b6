-- Refresh the hours (grain 'hour') of `endpoint_call_periods` for the hours in [{start}, {end}) from `endpoint_facts`
-- (refreshed just before by the same tick): per hour, filter dimensions and endpoint, the aggregates of the
-- endpoint_call_states macro and the hour's 5 slowest calls (duration descending, then event id). The facts mark a
-- page load's first call of the endpoint and carry its calls of it (looked for from an hour before), so a load whose
-- calls cross an hour boundary counts once and its fan-out whole.
INSERT INTO endpoint_call_periods
WITH groupArraySorted(5)((-duration_ms, toString(tx), ts, status_code, description)) AS slowest
SELECT org_id, project_id, 'hour' AS grain, toStartOfHour(ts) AS hour, environment, release, browser, source, method,
       path,
       ${endpoint_call_states},
       arrayMap(x -> -x.1, slowest), arrayMap(x -> x.2, slowest), arrayMap(x -> x.3, slowest),
       arrayMap(x -> x.4, slowest), arrayMap(x -> x.5, slowest),
       {materialized_at:DateTime64(6, 'UTC')}
FROM endpoint_facts FINAL
WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, hour, environment, release, browser, source, method, path
