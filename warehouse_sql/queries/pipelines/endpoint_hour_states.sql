-- Refresh `endpoint_hour_states` for the hours in [{start}, {end}) from the raw rows of those hours: server
-- endpoints from http.server transactions (path = the stored route), browser calls from http.client spans
-- ("GET https://host/path"), per project, source, method, normalised path, release and hour: calls, duration
-- (sum and exact p50/p95 state) and outcomes.
INSERT INTO endpoint_hour_states
SELECT
    any(org_id), project_id, source, method, path, release, hour,
    count(), sum(duration_ms), quantilesExactInclusiveState(0.5, 0.95)(duration_ms),
    countIf(status_code BETWEEN 200 AND 399), countIf(status_code BETWEEN 400 AND 499),
    countIf(status_code BETWEEN 500 AND 599),
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, 'server' AS source, toString(http_method) AS method, page AS path,
           toString(release) AS release, toStartOfHour(timestamp) AS hour, duration_ms, http_status AS status_code
    FROM transactions
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
      AND op = 'http.server'
    UNION ALL
    SELECT org_id, project_id, 'client' AS source, method,
           -- Fold ids like stacklens.ingest.routes.normalise_route: digits -> {id}, UUID -> {uuid}, digests -> {hash}.
           if(folded = '', '/', folded) AS path, release, hour, duration_ms, status_code
    FROM
    (
        SELECT org_id, project_id, toString(release) AS release, toStartOfHour(timestamp) AS hour, duration_ms,
               status_code,
               upper(if(toString(http_method) != '', toString(http_method), splitByChar(' ', description)[1])) AS method,
               splitByChar(' ', description)[-1] AS target,
               if(startsWith(target, '/'), cutQueryStringAndFragment(target), path(target)) AS raw_path,
               trimRight(arrayStringConcat(arrayMap(s -> multiIf(
                   match(s, '^[0-9]+$'), '{id}',
                   match(s, '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'), '{uuid}',
                   match(s, '^[0-9a-fA-F]{12,}$') AND match(s, '[0-9]') AND match(s, '[a-fA-F]'), '{hash}',
                   s), splitByChar('/', raw_path)), '/'), '/') AS folded
        FROM spans
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
          AND op = 'http.client'
    )
)
GROUP BY project_id, source, method, path, release, hour
