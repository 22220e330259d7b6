-- Refresh `resource_detail_hour_states` for the hours in [{start}, {end}) from the raw spans of those hours: per
-- project, page, hour and resource (URL without query) the requests, sizes, load time, its exact p95 state and
-- whether any load was render-blocking.
INSERT INTO resource_detail_hour_states
SELECT
    any(org_id), project_id, page, toStartOfHour(timestamp) AS hour, resource, any(resource_type),
    count(), sum(size), max(size), sum(decoded), sum(duration_ms), quantilesExactInclusiveState(0.95)(duration_ms),
    max(blocking), {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, page, timestamp, duration_ms,
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
GROUP BY project_id, page, hour, resource
