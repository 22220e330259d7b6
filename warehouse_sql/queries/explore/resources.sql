-- Explore's `resources` dataset (stacklens/explore/datasets.py): one row per resource request of the organization's
-- projects in the window [since, until), the rows `resource_facts` holds (queries/pipelines/resource_facts.sql):
-- the `resource.*` spans and the browser's API calls (`http.client`, type API) of page loads and navigations.
-- Columns: ts, uid (spans carry no user: ''), tags (none: an empty map), f_<field>, m_<metric>, h_<metric>. The
-- type is sorted and the resource named (its URL without query and fragment) as `resource_facts` does; the size is
-- what the resource views count: the encoded body, else the transfer size. `h_resource_duration_ms`: the duration
-- as the views' states keep it, the value of its 1 % log bucket (macros duration_hist_key and duration_hist_value,
-- the expressions of `resource_request_periods`): Explore's percentiles are taken over it with the views'
-- function, so they equal the resources view's.
SELECT * EXCEPT (k), ${duration_hist_value} AS h_resource_duration_ms
FROM
(
    SELECT timestamp AS ts, '' AS uid, CAST(map(), 'Map(String, String)') AS tags,
           environment AS f_environment, release AS f_release, page AS f_page, op AS f_op,
           multiIf(
               op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
               op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
               op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
               op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
               op IN ('http.client', 'resource.fetch', 'resource.xmlhttprequest'), 'API',
               'Other') AS f_resource_type,
           cutQueryStringAndFragment(description) AS f_resource, render_blocking_status AS f_render_blocking,
           toFloat64(status_code) AS f_status_code,
           duration_ms AS m_resource_duration_ms,
           toFloat64(coalesce(response_content_length, transfer_size, 0)) AS m_resource_bytes,
           ${duration_hist_key} AS k
    FROM spans
    WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
      AND (op LIKE 'resource.%' OR op = 'http.client') AND transaction_op IN ('pageload', 'navigation')
)
