-- Refresh `endpoint_call_hours` for the hours in [{start}, {end}) from `endpoint_facts` (refreshed just before by
-- the same tick): per hour, filter dimensions and endpoint, the aggregates of the endpoint_call_states macro. A
-- page load's calls are looked for from an hour before {start}, so a load whose calls cross an hour boundary
-- counts once and its fan-out whole.
INSERT INTO endpoint_call_hours
SELECT org_id, project_id, toStartOfHour(ts) AS hour, environment, release, browser, source, method, path,
       ${endpoint_call_states},
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, ts, environment, release, browser, source, method, path, page, duration_ms,
           status_code, bytes,
           (ts, span_id) = min((ts, span_id)) OVER (PARTITION BY org_id, project_id, tx, source, method, path)
               AS first_of_load,
           count() OVER (PARTITION BY org_id, project_id, tx, source, method, path) AS per_load
    FROM endpoint_facts FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND ts < {end:DateTime64(3, 'UTC')}
)
WHERE ts >= {start:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, hour, environment, release, browser, source, method, path
