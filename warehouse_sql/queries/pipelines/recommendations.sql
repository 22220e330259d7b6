-- The `recommendations` of this run, over the performance marts since {since_day}. Thresholds:
--   large_javascript      JavaScript per view > 300 KB (High > 1 MB)
--   render_blocking_css   a render-blocking stylesheet with impact High or Medium (severity = impact)
--   slow_ttfb             page TTFB p75 > 800 ms (High > 1800 ms)
--   oversized_image       an image averaging > 200 KB (High > 1 MB)
--   uncompressed_image    a BMP/TIFF image, or a PNG over 100 KB (photographs shrink 5-10x as WebP/AVIF)
--   slow_api              endpoint p95 > 1000 ms (High > 3000 ms)
--   failing_api           endpoint error rate > 5 % over at least 20 calls (High > 20 %)
-- Multi-day figures are weighted by views / calls / requests. Resource rules make one row per resource (never one
-- per page that loads it): `page` is the page loading it most, evidence['pages'] how many pages load it.
INSERT INTO recommendations
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'large_javascript' AS rule, page, '' AS subject,
           sum(total_bytes) / sum(views) AS per_view,
           if(per_view > 1048576, 'High', 'Medium') AS severity,
           format('{} loads {} KB of JavaScript per view', page, toString(round(per_view / 1024))) AS message,
           map('js_bytes_per_view', per_view, 'views', toFloat64(sum(views))) AS evidence
    FROM resource_breakdown FINAL
    WHERE day >= {since_day:Date} AND resource_type = 'JavaScript'
    GROUP BY project_id, page HAVING per_view > 307200
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'render_blocking_css' AS rule, argMax(resource_details.page, requests) AS page,
           resource AS subject,
           sum(avg_load_ms * requests) / sum(requests) AS load_ms, sum(avg_bytes * requests) / sum(requests) AS bytes,
           if(load_ms >= 500 OR bytes >= 102400, 'High', 'Medium') AS severity,
           format('Render-blocking stylesheet {} delays {} pages', resource, toString(uniqExact(resource_details.page))) AS message,
           map('avg_load_ms', load_ms, 'avg_bytes', bytes, 'requests', toFloat64(sum(requests)),
               'pages', toFloat64(uniqExact(resource_details.page))) AS evidence
    FROM resource_details FINAL
    WHERE day >= {since_day:Date} AND resource_type = 'CSS' AND render_blocking = 1
    GROUP BY project_id, resource HAVING load_ms >= 200 OR bytes >= 30720
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'slow_ttfb' AS rule, page, '' AS subject,
           sumIf(ttfb_p75_ms * views, ttfb_p75_ms IS NOT NULL) / sumIf(views, ttfb_p75_ms IS NOT NULL) AS ttfb,
           if(ttfb > 1800, 'High', 'Medium') AS severity,
           format('{} answers slowly: TTFB p75 {} ms', page, toString(round(ttfb))) AS message,
           map('ttfb_p75_ms', ttfb, 'views', toFloat64(sum(views))) AS evidence
    FROM page_metrics FINAL
    WHERE day >= {since_day:Date}
    GROUP BY project_id, page HAVING sumIf(views, ttfb_p75_ms IS NOT NULL) > 0 AND ttfb > 800
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'oversized_image' AS rule, argMax(resource_details.page, requests) AS page,
           resource AS subject,
           sum(avg_bytes * requests) / sum(requests) AS bytes,
           if(bytes > 1048576, 'High', 'Medium') AS severity,
           format('Image {} weighs {} KB ({} pages)', resource, toString(round(bytes / 1024)),
                  toString(uniqExact(resource_details.page))) AS message,
           map('avg_bytes', bytes, 'requests', toFloat64(sum(requests)), 'pages', toFloat64(uniqExact(resource_details.page))) AS evidence
    FROM resource_details FINAL
    WHERE day >= {since_day:Date} AND resource_type = 'Images'
    GROUP BY project_id, resource HAVING bytes > 204800
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'uncompressed_image' AS rule, argMax(resource_details.page, requests) AS page,
           resource AS subject,
           sum(avg_bytes * requests) / sum(requests) AS bytes, 'Medium' AS severity,
           format('Image {} is stored in a format that compresses poorly ({} KB, {} pages)', resource,
                  toString(round(bytes / 1024)), toString(uniqExact(resource_details.page))) AS message,
           map('avg_bytes', bytes, 'requests', toFloat64(sum(requests)), 'pages', toFloat64(uniqExact(resource_details.page))) AS evidence
    FROM resource_details FINAL
    WHERE day >= {since_day:Date} AND resource_type = 'Images'
    GROUP BY project_id, resource
    HAVING match(lower(resource), '\\.(bmp|tiff?)$') OR (match(lower(resource), '\\.png$') AND bytes > 102400)
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'slow_api' AS rule, path AS page, concat(method, ' ', path) AS subject,
           sum(p95_ms * calls) / sum(calls) AS p95, if(p95 > 3000, 'High', 'Medium') AS severity,
           format('{} {} is slow: p95 {} ms', method, path, toString(round(p95))) AS message,
           map('p95_ms', p95, 'calls', toFloat64(sum(calls))) AS evidence
    FROM api_endpoint_metrics FINAL
    WHERE day >= {since_day:Date}
    GROUP BY project_id, method, path HAVING p95 > 1000
)
UNION ALL
SELECT org_id, project_id, rule, severity, page, subject, message, evidence, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, 'failing_api' AS rule, path AS page, concat(method, ' ', path) AS subject,
           100 * sum(client_errors + server_errors) / sum(calls) AS error_pct,
           if(error_pct > 20, 'High', 'Medium') AS severity,
           format('{} {} fails {}% of calls', method, path, toString(round(error_pct, 1))) AS message,
           map('error_pct', error_pct, 'calls', toFloat64(sum(calls)),
               'server_errors', toFloat64(sum(server_errors)), 'client_errors', toFloat64(sum(client_errors))) AS evidence
    FROM api_endpoint_metrics FINAL
    WHERE day >= {since_day:Date}
    GROUP BY project_id, method, path HAVING sum(calls) >= 20 AND error_pct > 5
)
