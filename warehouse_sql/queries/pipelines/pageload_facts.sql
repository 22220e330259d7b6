-- Refresh `pageload_facts` for the page loads that started in [{start}, {end}): one row per page load with its
-- dimensions, vitals (NULL when absent), DOM ready (the `dom_ready` measurement, else the end of the
-- DOMContentLoaded span after the start; @sentry/browser names that span by version: op `browser` with description
-- `domContentLoadedEvent` (v7), `browser.domContentLoadedEvent` (v8-v10), `browser.dom_content_loaded_event`
-- (v11)), INP (the `inp` measurement, else the largest INP of the standalone interaction spans of its trace:
-- @sentry/browser 8+ sends INP as a `ui.interaction.*` span when the page is hidden, stored as a transactions row of
-- its own by stacklens/ingest/inp.py, up to an hour after the page load), the page load's own INP (the measurement
-- alone, `vital_inp`: what Explore reads, migration 0320), total resource time (sum of resource.* spans, NULL
-- without any), its http.client calls (count, durations, 4xx/5xx), JavaScript bytes (encoded body of script resources), the bytes of all its resources and API
-- calls (encoded body, else transfer size) and its score
-- (stacklens/performance/score.py: Lighthouse log-normal per vital, weights renormalised over the vitals present,
-- mobile control points for Android/iOS/iPadOS). Spans are read up to an hour past {end}: a page load's spans
-- start after it. Rows of an hour written again replace the earlier ones (ReplacingMergeTree).
INSERT INTO pageload_facts
SELECT t.org_id, t.project_id, t.timestamp, t.event_id, t.page, t.environment, t.release, t.browser_name,
       mobile, t.duration_ms,
       if(has_ttfb, m['ttfb'], NULL), if(has_fcp, m['fcp'], NULL), if(has_lcp, m['lcp'], NULL),
       if(has_inp, m['inp'], NULL), t.own_inp, if(has_cls, m['cls'], NULL),
       if(mapContains(m, 'dom_ready'), m['dom_ready'],
          if(s.dcl_end > 0, s.dcl_end - toUnixTimestamp64Milli(t.timestamp), NULL)),
       if(s.resources > 0, s.resource_ms, NULL),
       score, s.api_calls, s.api_errors, s.api_ms, s.js_bytes, s.total_bytes, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT tx.*, tx.vital_inp AS own_inp,
           if(i.trace_id != '' AND NOT mapContains(tx.measurements, 'inp'),
              mapUpdate(tx.measurements, map('inp', i.inp)), tx.measurements) AS m,
           tx.os_name IN ('Android', 'iOS', 'iPadOS') AS mobile,
           mapContains(m, 'lcp') AS has_lcp, mapContains(m, 'inp') AS has_inp, mapContains(m, 'fcp') AS has_fcp,
           mapContains(m, 'cls') AS has_cls, mapContains(m, 'ttfb') AS has_ttfb,
               if({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb = 0, NULL,
                  100 * ({w_lcp:Float64} * if(has_lcp AND m['lcp'] <= 0, 1, if(has_lcp, (1 - erf(log(greatest(m['lcp'], 1e-9) / if(mobile, {lcp_med_m:Float64}, {lcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {lcp_p10_m:Float64} / {lcp_med_m:Float64}, {lcp_p10_d:Float64} / {lcp_med_d:Float64})))) / 2, 0))
                 + {w_inp:Float64} * if(has_inp AND m['inp'] <= 0, 1, if(has_inp, (1 - erf(log(greatest(m['inp'], 1e-9) / if(mobile, {inp_med_m:Float64}, {inp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {inp_p10_m:Float64} / {inp_med_m:Float64}, {inp_p10_d:Float64} / {inp_med_d:Float64})))) / 2, 0))
                 + {w_fcp:Float64} * if(has_fcp AND m['fcp'] <= 0, 1, if(has_fcp, (1 - erf(log(greatest(m['fcp'], 1e-9) / if(mobile, {fcp_med_m:Float64}, {fcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {fcp_p10_m:Float64} / {fcp_med_m:Float64}, {fcp_p10_d:Float64} / {fcp_med_d:Float64})))) / 2, 0))
                 + {w_cls:Float64} * if(has_cls AND m['cls'] <= 0, 1, if(has_cls, (1 - erf(log(greatest(m['cls'], 1e-9) / if(mobile, {cls_med_m:Float64}, {cls_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {cls_p10_m:Float64} / {cls_med_m:Float64}, {cls_p10_d:Float64} / {cls_med_d:Float64})))) / 2, 0))
                 + {w_ttfb:Float64} * if(has_ttfb AND m['ttfb'] <= 0, 1, if(has_ttfb, (1 - erf(log(greatest(m['ttfb'], 1e-9) / if(mobile, {ttfb_med_m:Float64}, {ttfb_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {ttfb_p10_m:Float64} / {ttfb_med_m:Float64}, {ttfb_p10_d:Float64} / {ttfb_med_d:Float64})))) / 2, 0)))
                  / ({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb)) AS score
    FROM transactions AS tx
    LEFT JOIN
    (
        SELECT trace_id, max(measurements['inp']) AS inp
        FROM transactions
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')} + INTERVAL 1 HOUR
          AND startsWith(op, 'ui.interaction') AND trace_id != '' AND mapContains(measurements, 'inp')
        GROUP BY trace_id
    ) AS i ON i.trace_id = tx.trace_id
    WHERE tx.timestamp >= {start:DateTime64(3, 'UTC')} AND tx.timestamp < {end:DateTime64(3, 'UTC')}
      AND tx.op = 'pageload'
) AS t
LEFT JOIN
(
    SELECT transaction_event_id,
           sumIf(duration_ms, op LIKE 'resource.%') AS resource_ms,
           countIf(op LIKE 'resource.%') AS resources,
           countIf(op = 'http.client') AS api_calls,
           countIf(op = 'http.client' AND status_code BETWEEN 400 AND 599) AS api_errors,
           groupArrayIf(duration_ms, op = 'http.client') AS api_ms,
           sumIf(coalesce(response_content_length, transfer_size, 0),
                 op = 'resource.script' OR (op LIKE 'resource.%' AND match(description, '\\.m?js(\\?|#|$)'))) AS js_bytes,
           sumIf(coalesce(response_content_length, transfer_size, 0), op LIKE 'resource.%' OR op = 'http.client') AS total_bytes,
           maxIf(toUnixTimestamp64Milli(timestamp) + duration_ms,
                 (op = 'browser' AND description = 'domContentLoadedEvent')
                 OR op IN ('browser.domContentLoadedEvent', 'browser.dom_content_loaded_event')) AS dcl_end
    FROM spans
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')} + INTERVAL 1 HOUR
      AND transaction_op = 'pageload' AND (op LIKE 'resource.%' OR op LIKE 'browser%' OR op = 'http.client')
    GROUP BY transaction_event_id
) AS s ON s.transaction_event_id = t.event_id
SETTINGS join_use_nulls = 0
