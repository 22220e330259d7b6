-- Refresh `resource_hour_states` for the hours in [{start}, {end}) from the raw spans of those hours: per
-- project, page, release, hour and resource type (JavaScript / CSS / Images / Fonts / API / Other) the requests,
-- the views that loaded one (exact set state), bytes, load time and its exact p95 state.
INSERT INTO resource_hour_states
SELECT
    any(org_id), project_id, page, toString(release) AS release, toStartOfHour(timestamp) AS hour, resource_type,
    count(), uniqExactState(transaction_event_id), sum(size), sum(duration_ms),
    quantilesExactInclusiveState(0.95)(duration_ms),
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, page, release, timestamp, transaction_event_id, duration_ms,
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
GROUP BY project_id, page, release, hour, resource_type
