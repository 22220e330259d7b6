-- Explore's `api_calls` dataset (stacklens/explore/datasets.py): one row per API call of the organization's
-- projects in the window [since, until), the rows `endpoint_facts` holds (queries/pipelines/endpoint_facts.sql):
-- the requests services handled (`http.server` transactions, source 'server') and the calls browsers made
-- (`http.client` spans, source 'client'). Columns: ts, uid, tags, f_<field>, m_<metric>, h_<metric>. `f_path` is
-- the endpoint view's path: the server's stored route; the client call's path with ids, UUIDs and digests folded
-- to {id}, {uuid}, {hash}. `h_api_ms`: the duration as the views' states keep it, the value of its 1 % log bucket
-- (macros duration_hist_key and duration_hist_value, the expressions of `endpoint_call_periods`): Explore's
-- percentiles are taken over it with the views' function, so they equal the endpoints view's, the budgets' and
-- the alerts' figures.
SELECT * EXCEPT (k), ${duration_hist_value} AS h_api_ms
FROM
(
    SELECT timestamp AS ts, user_key AS uid, tags,
           environment AS f_environment, release AS f_release, 'server' AS f_source,
           toString(http_method) AS f_method, page AS f_path, transaction AS f_endpoint, page AS f_page,
           toFloat64(http_status) AS f_status_code,
           duration_ms AS m_api_ms, ${duration_hist_key} AS k
    FROM transactions
    WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
      AND op = 'http.server'
    UNION ALL
    SELECT timestamp AS ts, '' AS uid, CAST(map(), 'Map(String, String)') AS tags,
           environment AS f_environment, release AS f_release, 'client' AS f_source,
           upper(if(toString(http_method) != '', toString(http_method), splitByChar(' ', description)[1])) AS f_method,
           if(folded = '', '/', folded) AS f_path, description AS f_endpoint, page AS f_page,
           toFloat64(status_code) AS f_status_code,
           duration_ms AS m_api_ms, ${duration_hist_key} AS k
    FROM
    (
        SELECT timestamp, environment, release, http_method, description, page, status_code, duration_ms,
               splitByChar(' ', description)[-1] AS target,
               if(startsWith(target, '/'), cutQueryStringAndFragment(target), path(target)) AS raw_path,
               trimRight(arrayStringConcat(arrayMap(x -> multiIf(
                   match(x, '^[0-9]+$'), '{id}',
                   match(x, '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'), '{uuid}',
                   match(x, '^[0-9a-fA-F]{12,}$') AND match(x, '[0-9]') AND match(x, '[a-fA-F]'), '{hash}',
                   x), splitByChar('/', raw_path)), '/'), '/') AS folded
        FROM spans
        WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op = 'http.client'
    )
)
