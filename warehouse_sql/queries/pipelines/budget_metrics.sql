-- Current value of every budget metric per project and page ('*' = the whole project) over [{since}, now):
-- load_time_ms / ttfb_ms / lcp_ms / inp_ms / cls = p75 over page loads; js_bytes = JavaScript bytes per page
-- view; api_p95_ms = p95 of API calls (browser http.client spans, else http.server transactions).
WITH
    tx AS
    (
        SELECT project_id, if(grouping(page) = 1, '*', page) AS scope,
               if(countIf(op = 'pageload') = 0, NULL, quantileExactInclusiveIf(0.75)(duration_ms, op = 'pageload')) AS load_time_ms,
               if(countIf(has_ttfb) = 0, NULL, quantileExactInclusiveIf(0.75)(measurements['ttfb'], has_ttfb)) AS ttfb_ms,
               if(countIf(has_lcp) = 0, NULL, quantileExactInclusiveIf(0.75)(measurements['lcp'], has_lcp)) AS lcp_ms,
               if(countIf(has_inp) = 0, NULL, quantileExactInclusiveIf(0.75)(measurements['inp'], has_inp)) AS inp_ms,
               if(countIf(has_cls) = 0, NULL, quantileExactInclusiveIf(0.75)(measurements['cls'], has_cls)) AS cls,
               uniqExactIf(event_id, op IN ('pageload', 'navigation')) AS views,
               if(countIf(op = 'http.server') = 0, NULL, quantileExactInclusiveIf(0.95)(duration_ms, op = 'http.server')) AS server_p95
        FROM
        (
            SELECT *, mapContains(measurements, 'ttfb') AS has_ttfb, mapContains(measurements, 'lcp') AS has_lcp,
                   mapContains(measurements, 'inp') AS has_inp, mapContains(measurements, 'cls') AS has_cls
            FROM transactions
            WHERE project_id IN {project_ids:Array(UInt64)} AND timestamp >= {since:DateTime64(3, 'UTC')}
        )
        GROUP BY GROUPING SETS ((project_id, page), (project_id))
    ),
    sp AS
    (
        SELECT project_id, if(grouping(page) = 1, '*', page) AS scope,
               sumIf(coalesce(response_content_length, transfer_size, 0),
                     op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)')) AS js_total,
               if(countIf(op = 'http.client') = 0, NULL, quantileExactInclusiveIf(0.95)(duration_ms, op = 'http.client')) AS client_p95
        FROM spans
        WHERE project_id IN {project_ids:Array(UInt64)} AND timestamp >= {since:DateTime64(3, 'UTC')}
          AND (op LIKE 'resource.%' OR op = 'http.client')
        GROUP BY GROUPING SETS ((project_id, page), (project_id))
    )
SELECT t.project_id AS project_id, t.scope AS scope, t.load_time_ms AS load_time_ms, t.ttfb_ms AS ttfb_ms,
       t.lcp_ms AS lcp_ms, t.inp_ms AS inp_ms, t.cls AS cls,
       if(t.views = 0, NULL, coalesce(s.js_total, 0) / t.views) AS js_bytes,
       coalesce(s.client_p95, t.server_p95) AS api_p95_ms
FROM tx AS t
LEFT JOIN sp AS s ON s.project_id = t.project_id AND s.scope = t.scope
SETTINGS join_use_nulls = 1
