-- Rebuild `resource_details` for the days in [{start}, {end}).
-- Render-blocking impact: High when the resource takes >= 500 ms on average or weighs >= 100 KB;
-- Medium when >= 200 ms or >= 30 KB; else Low.
INSERT INTO resource_details
SELECT
    any(org_id), project_id, page, day, resource, any(resource_type),
    count() AS requests,
    avg(size) AS avg_bytes,
    toUInt64(max(size)) AS max_bytes,
    avg(decoded) AS avg_decoded_bytes,
    avg(duration_ms) AS avg_load_ms,
    quantileExactInclusive(0.95)(duration_ms) AS p95_load_ms,
    max(blocking) AS render_blocking,
    if(max(blocking) = 0, '',
       multiIf(avg(duration_ms) >= 500 OR avg(size) >= 102400, 'High',
               avg(duration_ms) >= 200 OR avg(size) >= 30720, 'Medium', 'Low')) AS impact,
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, page, toDate(timestamp) AS day, duration_ms,
        cutQueryStringAndFragment(description) AS resource,
        coalesce(response_content_length, transfer_size, 0) AS size,
        coalesce(decoded_content_length, response_content_length, transfer_size, 0) AS decoded,
        render_blocking_status = 'blocking' AS blocking,
        multiIf(
            op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
            op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
            op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
            op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
            'Other') AS resource_type
    FROM spans
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
      AND op LIKE 'resource.%' AND op NOT IN ('resource.fetch', 'resource.xmlhttprequest')
)
GROUP BY project_id, page, day, resource
