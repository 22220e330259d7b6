-- Rebuild `page_metrics` for the days in [{start}, {end}). Exact percentiles (linear interpolation between
-- order statistics, as numpy/polars "linear") over the day's rows: a partition is small enough to sort.
-- DOM ready = end of the DOMContentLoaded span after the transaction start, unless the transaction carries
-- a `dom_ready` measurement. @sentry/browser names that span by version: op `browser` with description
-- `domContentLoadedEvent` (v7), op `browser.domContentLoadedEvent` (v8-v10), op
-- `browser.dom_content_loaded_event` (v11); all three are read. Resource load = sum of the view's resource.*
-- span durations;
-- API = each http.client span of a view of the page.
INSERT INTO page_metrics
WITH
    views AS
    (
        SELECT t.org_id AS org_id, t.project_id AS project_id, t.page AS page, toDate(t.timestamp) AS day,
               t.event_id AS event_id, t.op AS op, t.duration_ms AS load_ms,
               t.measurements['ttfb'] AS ttfb, mapContains(t.measurements, 'ttfb') AS has_ttfb,
               if(mapContains(t.measurements, 'dom_ready'), t.measurements['dom_ready'],
                  s.dcl_end - toUnixTimestamp64Milli(t.timestamp)) AS dom_ready,
               mapContains(t.measurements, 'dom_ready') OR s.dcl_end > 0 AS has_dom_ready,
               s.resource_ms AS resource_ms, s.resources > 0 AS has_resources,
               t.measurements['lcp'] AS lcp, mapContains(t.measurements, 'lcp') AS has_lcp,
               t.measurements['cls'] AS cls, mapContains(t.measurements, 'cls') AS has_cls,
               t.measurements['inp'] AS inp, mapContains(t.measurements, 'inp') AS has_inp
        FROM transactions AS t
        LEFT JOIN
        (
            SELECT transaction_event_id,
                   sumIf(duration_ms, op LIKE 'resource.%') AS resource_ms,
                   countIf(op LIKE 'resource.%') AS resources,
                   maxIf(toUnixTimestamp64Milli(timestamp) + duration_ms,
                         (op = 'browser' AND description = 'domContentLoadedEvent')
                         OR op IN ('browser.domContentLoadedEvent', 'browser.dom_content_loaded_event')) AS dcl_end
            FROM spans
            WHERE timestamp >= {start:DateTime64(3, 'UTC')}
              AND timestamp < {end:DateTime64(3, 'UTC')} + INTERVAL 1 HOUR
              AND transaction_op IN ('pageload', 'navigation')
              AND (op LIKE 'resource.%' OR op LIKE 'browser%')
            GROUP BY transaction_event_id
        ) AS s ON s.transaction_event_id = t.event_id
        WHERE t.timestamp >= {start:DateTime64(3, 'UTC')} AND t.timestamp < {end:DateTime64(3, 'UTC')}
          AND t.op IN ('pageload', 'navigation')
        SETTINGS join_use_nulls = 0
    ),
    -- @sentry/browser 8+ reports INP as a standalone span after a slow interaction; ingest lands it as a
    -- `transactions` row with op `ui.interaction.*` and the `inp` measurement. Those rows add INP samples to
    -- their page and day, never views or load figures.
    interactions AS
    (
        SELECT org_id, project_id, page, toDate(timestamp) AS day, event_id, op,
               0.0 AS load_ms, 0.0 AS ttfb, false AS has_ttfb, 0.0 AS dom_ready, false AS has_dom_ready,
               0.0 AS resource_ms, false AS has_resources, 0.0 AS lcp, false AS has_lcp, 0.0 AS cls,
               false AS has_cls, measurements['inp'] AS inp, true AS has_inp
        FROM transactions
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
          AND op LIKE 'ui.interaction%' AND mapContains(measurements, 'inp')
    ),
    samples AS
    (
        SELECT * FROM views
        UNION ALL
        SELECT * FROM interactions
    ),
    api AS
    (
        SELECT project_id, page, toDate(timestamp) AS day, count() AS calls, avg(duration_ms) AS avg_ms,
               quantilesExactInclusive(0.5, 0.75, 0.95)(duration_ms) AS q
        FROM spans
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
          AND op = 'http.client' AND transaction_op IN ('pageload', 'navigation')
        GROUP BY project_id, page, day
    ),
    agg AS
    (
        SELECT any(org_id) AS org_id, project_id, page, day,
               uniqExactIf(event_id, op IN ('pageload', 'navigation')) AS views,
               countIf(op = 'pageload') AS n_load,
               avgIf(load_ms, op = 'pageload') AS load_avg,
               quantilesExactInclusiveIf(0.5, 0.75, 0.95)(load_ms, op = 'pageload') AS load_q,
               countIf(has_ttfb) AS n_ttfb, avgIf(ttfb, has_ttfb) AS ttfb_avg,
               quantilesExactInclusiveIf(0.5, 0.75, 0.95)(ttfb, has_ttfb) AS ttfb_q,
               countIf(has_dom_ready) AS n_dom, avgIf(dom_ready, has_dom_ready) AS dom_avg,
               quantilesExactInclusiveIf(0.5, 0.75, 0.95)(dom_ready, has_dom_ready) AS dom_q,
               countIf(has_resources) AS n_res, avgIf(resource_ms, has_resources) AS res_avg,
               quantilesExactInclusiveIf(0.5, 0.75, 0.95)(resource_ms, has_resources) AS res_q,
               countIf(has_lcp) AS n_lcp, quantileExactInclusiveIf(0.75)(lcp, has_lcp) AS lcp_p75,
               countIf(has_cls) AS n_cls, quantileExactInclusiveIf(0.75)(cls, has_cls) AS cls_p75,
               countIf(has_inp) AS n_inp, quantileExactInclusiveIf(0.75)(inp, has_inp) AS inp_p75
        FROM samples
        GROUP BY project_id, page, day
    )
SELECT
    g.org_id, g.project_id, g.page, g.day, g.views,
    if(g.n_load = 0, NULL, g.load_avg), if(g.n_load = 0, NULL, g.load_q[1]),
    if(g.n_load = 0, NULL, g.load_q[2]), if(g.n_load = 0, NULL, g.load_q[3]),
    if(g.n_ttfb = 0, NULL, g.ttfb_avg), if(g.n_ttfb = 0, NULL, g.ttfb_q[1]),
    if(g.n_ttfb = 0, NULL, g.ttfb_q[2]), if(g.n_ttfb = 0, NULL, g.ttfb_q[3]),
    if(g.n_dom = 0, NULL, g.dom_avg), if(g.n_dom = 0, NULL, g.dom_q[1]),
    if(g.n_dom = 0, NULL, g.dom_q[2]), if(g.n_dom = 0, NULL, g.dom_q[3]),
    if(g.n_res = 0, NULL, g.res_avg), if(g.n_res = 0, NULL, g.res_q[1]),
    if(g.n_res = 0, NULL, g.res_q[2]), if(g.n_res = 0, NULL, g.res_q[3]),
    a.calls,
    if(a.calls = 0, NULL, a.avg_ms), if(a.calls = 0, NULL, a.q[1]),
    if(a.calls = 0, NULL, a.q[2]), if(a.calls = 0, NULL, a.q[3]),
    if(g.n_lcp = 0, NULL, g.lcp_p75), if(g.n_cls = 0, NULL, g.cls_p75), if(g.n_inp = 0, NULL, g.inp_p75),
    {materialized_at:DateTime64(6, 'UTC')}
FROM agg AS g
LEFT JOIN api AS a ON a.project_id = g.project_id AND a.page = g.page AND a.day = g.day
SETTINGS join_use_nulls = 0
