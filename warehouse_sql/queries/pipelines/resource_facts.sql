-- Refresh `resource_facts` for the spans that started in [{start}, {end}): resource spans and browser API calls
-- of page loads and navigations, with their type (op first, else the URL's extension), URL without query, host,
-- sizes, render-blocking status, and from their page load (started up to an hour earlier) its browser, FCP and
-- host. `first_of_resource` / `first_of_type` mark a page load's first request of a resource (fetch/XHR calls
-- are one resource per type) / of a type, its requests looked for from an hour before {start}: the states count
-- page loads with them, so no read needs a window function. Rows of an hour written again replace the earlier
-- ones (ReplacingMergeTree).
INSERT INTO resource_facts
SELECT org_id, project_id, ts, load_id, span_id, page, environment, release, browser, is_request, resource, host,
       page_host, resource_type, duration_ms, enc, dec, transfer_size, blocking_status, fcp, first_of_resource,
       first_of_type, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT *,
           (ts, span_id) = min((ts, span_id)) OVER (PARTITION BY org_id, project_id, load_id, resource_type, resource_key)
               AS first_of_resource,
           (ts, span_id) = min((ts, span_id)) OVER (PARTITION BY org_id, project_id, load_id, resource_type) AS first_of_type
    FROM
    (
        SELECT s.org_id AS org_id, s.project_id AS project_id, s.timestamp AS ts, s.transaction_event_id AS load_id,
               s.span_id AS span_id, s.page AS page, s.environment AS environment, s.release AS release,
               coalesce(t.browser, '') AS browser,
               s.op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest') AS is_request,
               cutQueryStringAndFragment(s.description) AS resource, domain(s.description) AS host,
               coalesce(t.host, '') AS page_host,
               multiIf(
                   s.op = 'resource.script' OR match(s.description, '\\.m?js(\\?|#|$)'), 'JavaScript',
                   s.op = 'resource.css' OR match(s.description, '\\.css(\\?|#|$)'), 'CSS',
                   s.op = 'resource.img' OR match(s.description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
                   s.op = 'resource.font' OR match(s.description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
                   s.op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'), 'API',
                   'Other') AS resource_type,
               if(is_request, '', resource) AS resource_key,
               s.duration_ms AS duration_ms, coalesce(s.response_content_length, s.transfer_size, 0) AS enc,
               coalesce(s.decoded_content_length, s.response_content_length, s.transfer_size, 0) AS dec,
               s.transfer_size AS transfer_size, s.render_blocking_status AS blocking_status, t.fcp AS fcp
        FROM spans AS s
        LEFT JOIN
        (
            SELECT event_id, toString(browser_name) AS browser, domain(url) AS host,
                   if(mapContains(measurements, 'fcp'), measurements['fcp'], NULL) AS fcp
            FROM transactions
            WHERE timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 2 HOUR AND timestamp < {end:DateTime64(3, 'UTC')}
              AND op IN ('pageload', 'navigation')
        ) AS t ON t.event_id = s.transaction_event_id
        WHERE s.timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND s.timestamp < {end:DateTime64(3, 'UTC')}
          AND (s.op LIKE 'resource.%' OR s.op = 'http.client') AND s.transaction_op IN ('pageload', 'navigation')
        SETTINGS join_use_nulls = 1
    )
)
WHERE ts >= {start:DateTime64(3, 'UTC')}
