-- Explore's `resources` dataset (stacklens/explore/datasets.py): one row per resource request (a `resource.*`
-- span) of the organization's projects in the window [since, until). Columns: ts, uid (spans carry no user: ''),
-- tags (none: an empty map), f_<field>, m_<metric>. The type is sorted as `resource_facts` sorts it; the size is
-- what the resource views count: the encoded body, else the transfer size.
SELECT timestamp AS ts, '' AS uid, CAST(map(), 'Map(String, String)') AS tags,
       environment AS f_environment, release AS f_release, page AS f_page, op AS f_op,
       multiIf(
           op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
           op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
           op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
           op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
           op IN ('resource.fetch', 'resource.xmlhttprequest'), 'API',
           'Other') AS f_resource_type,
       description AS f_resource, render_blocking_status AS f_render_blocking,
       toFloat64(status_code) AS f_status_code,
       duration_ms AS m_resource_duration_ms,
       toFloat64(coalesce(response_content_length, transfer_size, 0)) AS m_resource_bytes
FROM spans
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND op LIKE 'resource.%'
