-- Refresh `endpoint_facts` for the API calls that started in [{start}, {end}): server side from http.server
-- transactions (path = the stored route), client side from the http.client spans browsers send ("GET
-- https://host/path"), with the parameterised path (ids -> {id}, UUIDs -> {uuid}, digests -> {hash}, as
-- stacklens.ingest.route_templates does) and the calling page load's browser (started up to an hour earlier).
-- Rows of an hour written again replace the earlier ones (ReplacingMergeTree). `first_of_load` marks a page
-- load's first call of the endpoint and `per_load` counts the load's calls of it, its calls looked for from
-- an hour before {start} (a server transaction is its own one call): the states count with them, so no read
-- needs a window function.
INSERT INTO endpoint_facts
SELECT org_id, project_id, timestamp, event_id, '', 'server', toString(http_method), page, '', environment, release,
       browser_name, duration_ms, http_status, NULL, transaction, toUInt8(1), toUInt32(1), {materialized_at:DateTime64(6, 'UTC')}
FROM transactions
WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')} AND op = 'http.server'
UNION ALL
SELECT org_id, project_id, ts, tx, span_id, 'client', method, path, from_page, environment, release, browser,
       duration_ms, status_code, bytes, description, first_of_load, per_load, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT *, if(folded = '', '/', folded) AS path,
           toUInt8((ts, span_id) = min((ts, span_id)) OVER (PARTITION BY org_id, project_id, tx, method, path)) AS first_of_load,
           toUInt32(count() OVER (PARTITION BY org_id, project_id, tx, method, path)) AS per_load
    FROM
    (
        SELECT s.org_id AS org_id, s.project_id AS project_id, s.timestamp AS ts, s.transaction_event_id AS tx,
               s.span_id AS span_id, s.page AS from_page, s.environment AS environment, s.release AS release,
               coalesce(t.browser, '') AS browser, s.duration_ms AS duration_ms, s.status_code AS status_code,
               coalesce(s.response_content_length, s.transfer_size) AS bytes, s.description AS description,
               upper(if(toString(s.http_method) != '', toString(s.http_method), splitByChar(' ', s.description)[1])) AS method,
               splitByChar(' ', s.description)[-1] AS target,
               if(startsWith(target, '/'), cutQueryStringAndFragment(target), path(target)) AS raw_path,
               trimRight(arrayStringConcat(arrayMap(x -> multiIf(
                   match(x, '^[0-9]+$'), '{id}',
                   match(x, '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'), '{uuid}',
                   match(x, '^[0-9a-fA-F]{12,}$') AND match(x, '[0-9]') AND match(x, '[a-fA-F]'), '{hash}',
                   x), splitByChar('/', raw_path)), '/'), '/') AS folded
        FROM spans AS s
        LEFT JOIN
        (
            SELECT event_id, toString(browser_name) AS browser
            FROM transactions
            WHERE timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 2 HOUR AND timestamp < {end:DateTime64(3, 'UTC')}
        ) AS t ON t.event_id = s.transaction_event_id
        WHERE s.timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND s.timestamp < {end:DateTime64(3, 'UTC')}
          AND s.op = 'http.client'
        SETTINGS join_use_nulls = 1
    )
)
WHERE ts >= {start:DateTime64(3, 'UTC')}
