-- Refresh `resource_facts` for the spans that started in [{start}, {end}): resource spans and browser API calls
-- of page loads and navigations, with their type (op first, else the URL's extension), URL without query, host,
-- sizes, render-blocking status, and from their page load (started up to an hour earlier) its browser, FCP and
-- host. Rows of an hour written again replace the earlier ones (ReplacingMergeTree).
INSERT INTO resource_facts
SELECT s.org_id, s.project_id, s.timestamp, s.transaction_event_id, s.span_id, s.page, s.environment, s.release,
       coalesce(t.browser, ''), s.op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'),
       cutQueryStringAndFragment(s.description), domain(s.description), coalesce(t.host, ''),
       multiIf(
           s.op = 'resource.script' OR match(s.description, '\\.m?js(\\?|#|$)'), 'JavaScript',
           s.op = 'resource.css' OR match(s.description, '\\.css(\\?|#|$)'), 'CSS',
           s.op = 'resource.img' OR match(s.description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
           s.op = 'resource.font' OR match(s.description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
           s.op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'), 'API',
           'Other'),
       s.duration_ms, coalesce(s.response_content_length, s.transfer_size, 0),
       coalesce(s.decoded_content_length, s.response_content_length, s.transfer_size, 0), s.transfer_size,
       s.render_blocking_status, t.fcp, {materialized_at:DateTime64(6, 'UTC')}
FROM spans AS s
LEFT JOIN
(
    SELECT event_id, toString(browser_name) AS browser, domain(url) AS host,
           if(mapContains(measurements, 'fcp'), measurements['fcp'], NULL) AS fcp
    FROM transactions
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {end:DateTime64(3, 'UTC')}
      AND op IN ('pageload', 'navigation')
) AS t ON t.event_id = s.transaction_event_id
WHERE s.timestamp >= {start:DateTime64(3, 'UTC')} AND s.timestamp < {end:DateTime64(3, 'UTC')}
  AND (s.op LIKE 'resource.%' OR s.op = 'http.client') AND s.transaction_op IN ('pageload', 'navigation')
SETTINGS join_use_nulls = 1
