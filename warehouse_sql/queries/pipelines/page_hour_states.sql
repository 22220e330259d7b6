-- Refresh `page_hour_states` for the hours in [{start}, {end}) from the raw rows of those hours: per project,
-- page, release and hour, over every transaction: page loads and navigations (views, load time, TTFB, DOM
-- ready, total resource load time, LCP, CLS, INP), the standalone INP spans @sentry/browser 8+ sends (ingested
-- as `transactions` rows with op `ui.interaction.*`: INP samples only, never views), the first transaction
-- (a release's first seen), and the http.client spans of page loads and navigations (API call times).
-- DOM ready = the `dom_ready` measurement, else the end of the DOMContentLoaded span after the transaction
-- start; @sentry/browser names that span by version: op `browser` with description `domContentLoadedEvent`
-- (v7), op `browser.domContentLoadedEvent` (v8-v10), op `browser.dom_content_loaded_event` (v11). Resource
-- load = sum of the view's resource.* span durations. Percentile states are exact (all values kept).
INSERT INTO page_hour_states
WITH
    tx AS
    (
        SELECT t.org_id AS org_id, t.project_id AS project_id, t.page AS page, toString(t.release) AS release,
               toStartOfHour(t.timestamp) AS hour, t.timestamp AS ts, t.event_id AS event_id, t.op AS op,
               t.op IN ('pageload', 'navigation') AS is_view,
               mapContains(t.measurements, 'inp') AND (is_view OR t.op LIKE 'ui.interaction%') AS has_inp,
               is_view OR has_inp AS is_sample,
               t.duration_ms AS load_ms,
               t.measurements['ttfb'] AS ttfb, is_view AND mapContains(t.measurements, 'ttfb') AS has_ttfb,
               if(mapContains(t.measurements, 'dom_ready'), t.measurements['dom_ready'],
                  s.dcl_end - toUnixTimestamp64Milli(t.timestamp)) AS dom_ready,
               is_view AND (mapContains(t.measurements, 'dom_ready') OR s.dcl_end > 0) AS has_dom_ready,
               s.resource_ms AS resource_ms, is_view AND s.resources > 0 AS has_resources,
               t.measurements['lcp'] AS lcp, is_view AND mapContains(t.measurements, 'lcp') AS has_lcp,
               t.measurements['cls'] AS cls, is_view AND mapContains(t.measurements, 'cls') AS has_cls,
               t.measurements['inp'] AS inp
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
        SETTINGS join_use_nulls = 0
    ),
    per_tx AS
    (
        SELECT any(org_id) AS org_id, project_id, page, release, hour,
               countIf(is_sample) AS samples,
               uniqExactIf(event_id, is_view) AS views,
               uniqExactIf(event_id, op = 'pageload') AS pageloads,
               min(ts) AS first_seen,
               countIf(op = 'pageload') AS load_n, sumIf(load_ms, op = 'pageload') AS load_sum,
               quantilesExactInclusiveStateIf(0.5, 0.75, 0.95)(load_ms, op = 'pageload') AS load_q,
               countIf(has_ttfb) AS ttfb_n, sumIf(ttfb, has_ttfb) AS ttfb_sum,
               quantilesExactInclusiveStateIf(0.5, 0.75, 0.95)(ttfb, has_ttfb) AS ttfb_q,
               countIf(has_dom_ready) AS dom_n, sumIf(dom_ready, has_dom_ready) AS dom_sum,
               quantilesExactInclusiveStateIf(0.5, 0.75, 0.95)(dom_ready, has_dom_ready) AS dom_q,
               countIf(has_resources) AS res_n, sumIf(resource_ms, has_resources) AS res_sum,
               quantilesExactInclusiveStateIf(0.5, 0.75, 0.95)(resource_ms, has_resources) AS res_q,
               countIf(has_lcp) AS lcp_n, quantilesExactInclusiveStateIf(0.75)(lcp, has_lcp) AS lcp_q,
               countIf(has_cls) AS cls_n, quantilesExactInclusiveStateIf(0.75)(cls, has_cls) AS cls_q,
               countIf(has_inp) AS inp_n, quantilesExactInclusiveStateIf(0.75)(inp, has_inp) AS inp_q
        FROM tx
        GROUP BY project_id, page, release, hour
    ),
    per_api AS
    (
        SELECT any(org_id) AS org_id, project_id, page, toString(release) AS release,
               toStartOfHour(timestamp) AS hour, count() AS api_calls, sum(duration_ms) AS api_sum,
               quantilesExactInclusiveState(0.5, 0.75, 0.95)(duration_ms) AS api_q
        FROM spans
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
          AND op = 'http.client' AND transaction_op IN ('pageload', 'navigation')
        GROUP BY project_id, page, release, hour
    )
SELECT if(t.org_id != 0, t.org_id, a.org_id), if(t.hit, t.project_id, a.project_id), if(t.hit, t.page, a.page),
       if(t.hit, t.release, a.release), if(t.hit, t.hour, a.hour),
       t.samples, t.views, t.pageloads, if(t.hit, t.first_seen, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')),
       t.load_n, t.load_sum, t.load_q, t.ttfb_n, t.ttfb_sum, t.ttfb_q, t.dom_n, t.dom_sum, t.dom_q,
       t.res_n, t.res_sum, t.res_q, t.lcp_n, t.lcp_q, t.cls_n, t.cls_q, t.inp_n, t.inp_q,
       a.api_calls, a.api_sum, a.api_q,
       {materialized_at:DateTime64(6, 'UTC')}
FROM (SELECT *, true AS hit FROM per_tx) AS t
FULL OUTER JOIN per_api AS a
    ON a.project_id = t.project_id AND a.page = t.page AND a.release = t.release AND a.hour = t.hour
SETTINGS join_use_nulls = 0
