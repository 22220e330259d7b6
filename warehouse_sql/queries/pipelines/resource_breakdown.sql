-- Rebuild `resource_breakdown` for the days in [{start}, {end}).
INSERT INTO resource_breakdown
SELECT
    any(org_id), project_id, page, toDate(timestamp) AS day, resource_type,
    count() AS requests,
    uniqExact(transaction_event_id) AS views,
    toUInt64(sum(size)) AS total_bytes,
    avg(size) AS avg_bytes,
    sum(size) / uniqExact(transaction_event_id) AS bytes_per_view,
    sum(duration_ms) AS total_load_ms,
    avg(duration_ms) AS avg_load_ms,
    quantileExactInclusive(0.95)(duration_ms) AS p95_load_ms,
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT *,
        coalesce(response_content_length, transfer_size, 0) AS size,
        multiIf(
            op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
            op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
            op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
            op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
            op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'), 'API',
            'Other') AS resource_type
    FROM spans
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
      AND (op LIKE 'resource.%' OR op = 'http.client')
)
GROUP BY project_id, page, day, resource_type
