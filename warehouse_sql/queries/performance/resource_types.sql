-- Resources per type (JavaScript, CSS, Images, Fonts, API, Other) of the spans in [since, until) and filters:
-- requests, page loads that fetched one, bytes (encoded body, decoded body, transfer), load time (avg, exact p95),
-- cache hits (transfer size 0 with a body: served from the browser cache) and compression (decoded / encoded).
-- The browser filter keeps the spans of page loads from that browser.
SELECT resource_type, count() AS requests, uniqExact(transaction_event_id) AS loads,
       sum(enc) AS total_bytes, avg(enc) AS avg_bytes, avg(dec) AS avg_decoded_bytes,
       avgIf(transfer_size, transfer_size IS NOT NULL) AS avg_transfer_bytes,
       avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
       countIf(transfer_size IS NOT NULL) AS transfer_n,
       countIf(transfer_size = 0 AND dec > 0) AS cache_hits,
       sumIf(dec, enc > 0) / nullIf(sumIf(enc, enc > 0), 0) AS compression_ratio
FROM
(
    SELECT transaction_event_id, duration_ms, transfer_size,
           coalesce(response_content_length, transfer_size, 0) AS enc,
           coalesce(decoded_content_length, response_content_length, transfer_size, 0) AS dec,
           multiIf(
               op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
               op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
               op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
               op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
               op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'), 'API',
               'Other') AS resource_type
    FROM spans
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
      AND (op LIKE 'resource.%' OR op = 'http.client') AND transaction_op IN ('pageload', 'navigation')
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR transaction_event_id IN
           (SELECT event_id FROM transactions
            WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
              AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {until:DateTime64(3, 'UTC')}
              AND browser_name = {browser:String}))
)
GROUP BY resource_type
ORDER BY total_bytes DESC
