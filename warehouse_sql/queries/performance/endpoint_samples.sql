-- The 5 slowest calls of one endpoint (source, method, parameterised path) in [since, until) and filters, with
-- the page load or server transaction they belong to (its waterfall).
SELECT toString(tx) AS event_id, ts, duration_ms, status_code, description
FROM
(
    SELECT 'server' AS source, toString(http_method) AS method, page AS path, timestamp AS ts, duration_ms,
           http_status AS status_code, event_id AS tx, transaction AS description
    FROM transactions
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
      AND op = 'http.server' AND {endpoint_source:String} = 'server'
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser_name = {browser:String})
    UNION ALL
    SELECT 'client' AS source, method, if(folded = '', '/', folded) AS path, ts, duration_ms, status_code, tx,
           description
    FROM
    (
        SELECT timestamp AS ts, duration_ms, status_code, transaction_event_id AS tx, description,
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
          AND op = 'http.client' AND {endpoint_source:String} = 'client'
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR transaction_event_id IN
               (SELECT event_id FROM transactions
                WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
                  AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR
                  AND timestamp < {until:DateTime64(3, 'UTC')} AND browser_name = {browser:String}))
    )
)
WHERE method = {endpoint_method:String} AND path = {endpoint_path:String}
ORDER BY duration_ms DESC, event_id
LIMIT 5
