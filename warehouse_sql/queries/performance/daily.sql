-- Shared part, the same in each query of this folder over page loads: `loads` = the page loads (op pageload) of
-- the window [since, until) and filters (environment, release, browser; page when not ''), each with its score
-- (stacklens/performance/score.py: Lighthouse log-normal per vital, weights renormalised over the vitals present),
-- DOM ready (measurement, else end of the DOMContentLoaded span), total resource time and API calls.
-- Per day (UTC) and, when by_page = 1, per page: views, exact p75 of each metric with its count, mean score.
WITH
    loads AS
    (
        -- One row per page load in the window and filters, with its vitals, phases and score.
        SELECT t.event_id AS event_id, t.page AS page, t.timestamp AS ts, t.duration_ms AS load_ms,
               t.measurements AS m, t.os_name IN ('Android', 'iOS', 'iPadOS') AS mobile,
               mapContains(t.measurements, 'lcp') AS has_lcp,
               mapContains(t.measurements, 'inp') AS has_inp,
               mapContains(t.measurements, 'fcp') AS has_fcp,
               mapContains(t.measurements, 'cls') AS has_cls,
               mapContains(t.measurements, 'ttfb') AS has_ttfb,
               if(mapContains(t.measurements, 'dom_ready'), t.measurements['dom_ready'],
                  if(s.dcl_end > 0, s.dcl_end - toUnixTimestamp64Milli(t.timestamp), NULL)) AS dom_ready,
               if(s.resources > 0, s.resource_ms, NULL) AS resource_ms,
               s.api_calls AS api_calls,
               if({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb = 0, NULL,
                  100 * ({w_lcp:Float64} * if(has_lcp AND m['lcp'] <= 0, 1, if(has_lcp, (1 - erf(log(greatest(m['lcp'], 1e-9) / if(mobile, {lcp_med_m:Float64}, {lcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {lcp_p10_m:Float64} / {lcp_med_m:Float64}, {lcp_p10_d:Float64} / {lcp_med_d:Float64})))) / 2, 0))
                 + {w_inp:Float64} * if(has_inp AND m['inp'] <= 0, 1, if(has_inp, (1 - erf(log(greatest(m['inp'], 1e-9) / if(mobile, {inp_med_m:Float64}, {inp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {inp_p10_m:Float64} / {inp_med_m:Float64}, {inp_p10_d:Float64} / {inp_med_d:Float64})))) / 2, 0))
                 + {w_fcp:Float64} * if(has_fcp AND m['fcp'] <= 0, 1, if(has_fcp, (1 - erf(log(greatest(m['fcp'], 1e-9) / if(mobile, {fcp_med_m:Float64}, {fcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {fcp_p10_m:Float64} / {fcp_med_m:Float64}, {fcp_p10_d:Float64} / {fcp_med_d:Float64})))) / 2, 0))
                 + {w_cls:Float64} * if(has_cls AND m['cls'] <= 0, 1, if(has_cls, (1 - erf(log(greatest(m['cls'], 1e-9) / if(mobile, {cls_med_m:Float64}, {cls_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {cls_p10_m:Float64} / {cls_med_m:Float64}, {cls_p10_d:Float64} / {cls_med_d:Float64})))) / 2, 0))
                 + {w_ttfb:Float64} * if(has_ttfb AND m['ttfb'] <= 0, 1, if(has_ttfb, (1 - erf(log(greatest(m['ttfb'], 1e-9) / if(mobile, {ttfb_med_m:Float64}, {ttfb_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {ttfb_p10_m:Float64} / {ttfb_med_m:Float64}, {ttfb_p10_d:Float64} / {ttfb_med_d:Float64})))) / 2, 0)))
                  / ({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb)) AS score
        FROM transactions AS t
        LEFT JOIN
        (
            SELECT transaction_event_id,
                   sumIf(duration_ms, op LIKE 'resource.%') AS resource_ms,
                   countIf(op LIKE 'resource.%') AS resources,
                   countIf(op = 'http.client') AS api_calls,
                   maxIf(toUnixTimestamp64Milli(timestamp) + duration_ms,
                         (op = 'browser' AND description = 'domContentLoadedEvent')
                         OR op IN ('browser.domContentLoadedEvent', 'browser.dom_content_loaded_event')) AS dcl_end
            FROM spans
            WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
              AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')} + INTERVAL 1 HOUR
              AND transaction_op = 'pageload'
              AND (op LIKE 'resource.%' OR op LIKE 'browser%' OR op = 'http.client')
              -- Spans carry their page load's page, environment and release: only the filtered loads' spans.
              AND ({environment:String} = '' OR environment = {environment:String})
              AND ({release:String} = '' OR release = {release:String})
              AND ({page:String} = '' OR page = {page:String})
            GROUP BY transaction_event_id
        ) AS s ON s.transaction_event_id = t.event_id
        WHERE t.project_id = {project_id:UInt64} AND t.org_id = {org_id:UInt64}
          AND t.timestamp >= {since:DateTime64(3, 'UTC')} AND t.timestamp < {until:DateTime64(3, 'UTC')}
          AND t.op = 'pageload'
          AND ({environment:String} = '' OR t.environment = {environment:String})
          AND ({release:String} = '' OR t.release = {release:String})
          AND ({browser:String} = '' OR t.browser_name = {browser:String})
          AND ({page:String} = '' OR t.page = {page:String})
        SETTINGS join_use_nulls = 0
    )
SELECT if({by_page:UInt8} = 1, page, '') AS key, toDate(ts) AS day, count() AS views,
       quantileExactInclusive(0.75)(load_ms) AS load_p75, avg(load_ms) AS load_avg,
       quantileExactInclusiveIf(0.75)(m['ttfb'], has_ttfb) AS ttfb_p75, countIf(has_ttfb) AS ttfb_n,
       quantileExactInclusiveIf(0.75)(dom_ready, dom_ready IS NOT NULL) AS dom_p75, countIf(dom_ready IS NOT NULL) AS dom_n,
       quantileExactInclusiveIf(0.75)(m['lcp'], has_lcp) AS lcp_p75, countIf(has_lcp) AS lcp_n,
       quantileExactInclusiveIf(0.75)(m['inp'], has_inp) AS inp_p75, countIf(has_inp) AS inp_n,
       quantileExactInclusiveIf(0.75)(m['cls'], has_cls) AS cls_p75, countIf(has_cls) AS cls_n,
       quantileExactInclusiveIf(0.75)(m['fcp'], has_fcp) AS fcp_p75, countIf(has_fcp) AS fcp_n,
       avgIf(score, score IS NOT NULL) AS score_mean, countIf(score IS NOT NULL) AS score_n
FROM loads
GROUP BY key, day
ORDER BY key, day
LIMIT 50000
