-- Rebuild `api_endpoint_metrics` for the days in [{start}, {end}) by merging the hours' states
-- (endpoint_hour_states, refreshed first for the hours that received data). Percentiles exact.
INSERT INTO api_endpoint_metrics
SELECT
    org_id, project_id, source, method, path, day, n_calls, dur_total / n_calls, q[1], q[2], n_success,
    n_client_errors, n_server_errors, 100 * (n_client_errors + n_server_errors) / n_calls,
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT max(org_id) AS org_id, project_id, source, method, path, toDate(hour) AS day,
           sum(calls) AS n_calls, sum(duration_sum) AS dur_total,
           quantilesExactInclusiveMerge(0.5, 0.95)(duration_q) AS q,
           sum(success) AS n_success, sum(client_errors) AS n_client_errors, sum(server_errors) AS n_server_errors
    FROM endpoint_hour_states FINAL
    WHERE hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
    GROUP BY project_id, source, method, path, day
)
