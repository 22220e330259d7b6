-- API endpoints of [since, until) and filters: server side from http.server transactions (path = the stored
-- route), client side from the http.client spans browsers send ("GET https://host/path"), per source, method
-- and parameterised path (ids -> {id}, UUIDs -> {uuid}, digests -> {hash}, as stacklens.ingest.routes does):
-- calls, avg and exact p95 duration, outcomes, response bytes, the most calls one page load made to it
-- (fan-out) and the pages that call it. With endpoint_path set, only that (source, method, path), per day (by_day = 1).
-- The browser filter keeps client calls of page loads from that browser (server transactions have no browser).
SELECT source, method, path, if({by_day:UInt8} = 1, toDate(ts), toDate(0)) AS day,
       count() AS calls, avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
       countIf(status_code BETWEEN 200 AND 299) AS s2xx, countIf(status_code BETWEEN 300 AND 399) AS s3xx,
       countIf(status_code BETWEEN 400 AND 499) AS s4xx, countIf(status_code BETWEEN 500 AND 599) AS s5xx,
       countIf(status_code = 0) AS no_status,
       avgIf(bytes, bytes IS NOT NULL) AS avg_bytes,
       max(per_load) AS max_per_load, uniqExactIf(tx, source = 'client') AS loads,
       arraySort(groupUniqArrayIf(10)(from_page, from_page != '')) AS pages
FROM
(
    SELECT source, method, path, ts, duration_ms, status_code, bytes, tx, from_page,
           count() OVER (PARTITION BY source, method, path, tx) AS per_load
    FROM
    (
        SELECT 'server' AS source, toString(http_method) AS method, page AS path, timestamp AS ts, duration_ms,
               http_status AS status_code, CAST(NULL AS Nullable(Int64)) AS bytes, event_id AS tx, '' AS from_page
        FROM transactions
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op = 'http.server'
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser_name = {browser:String})
        UNION ALL
        SELECT 'client' AS source, method, if(folded = '', '/', folded) AS path, ts, duration_ms, status_code,
               bytes, tx, from_page
        FROM
        (
            SELECT timestamp AS ts, duration_ms, status_code, transaction_event_id AS tx, page AS from_page,
                   coalesce(response_content_length, transfer_size) AS bytes,
                   upper(if(toString(http_method) != '', toString(http_method), splitByChar(' ', description)[1])) AS method,
                   splitByChar(' ', description)[-1] AS target,
                   if(startsWith(target, '/'), cutQueryStringAndFragment(target), path(target)) AS raw_path,
                   trimRight(arrayStringConcat(arrayMap(s -> multiIf(
                       match(s, '^[0-9]+$'), '{id}',
                       match(s, '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'), '{uuid}',
                       match(s, '^[0-9a-fA-F]{12,}$') AND match(s, '[0-9]') AND match(s, '[a-fA-F]'), '{hash}',
                       s), splitByChar('/', raw_path)), '/'), '/') AS folded
            FROM spans
            WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
              AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
              AND op = 'http.client'
              AND ({environment:String} = '' OR environment = {environment:String})
              AND ({release:String} = '' OR release = {release:String})
              AND ({browser:String} = '' OR transaction_event_id IN
                   (SELECT event_id FROM transactions
                    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
                      AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR
                      AND timestamp < {until:DateTime64(3, 'UTC')} AND browser_name = {browser:String}))
        )
    )
    WHERE {endpoint_path:String} = ''
       OR (source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String})
)
GROUP BY source, method, path, day
ORDER BY calls DESC, source, method, path, day
LIMIT 2000
