-- `loads` as in pages.sql without the span figures (DOM ready, resource time, API calls), which this query does not
-- need: the page loads (op pageload) of the window [since, until) and filters (environment, release, browser; page
-- when not ''), each with its score (stacklens/performance/score.py: Lighthouse log-normal per vital, weights
-- renormalised over the vitals present).
-- Sample page loads: the 3 fastest, the 3 nearest the median and the 3 slowest by load time.
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
               if({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb = 0, NULL,
                  100 * ({w_lcp:Float64} * if(has_lcp AND m['lcp'] <= 0, 1, if(has_lcp, (1 - erf(log(greatest(m['lcp'], 1e-9) / if(mobile, {lcp_med_m:Float64}, {lcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {lcp_p10_m:Float64} / {lcp_med_m:Float64}, {lcp_p10_d:Float64} / {lcp_med_d:Float64})))) / 2, 0))
                 + {w_inp:Float64} * if(has_inp AND m['inp'] <= 0, 1, if(has_inp, (1 - erf(log(greatest(m['inp'], 1e-9) / if(mobile, {inp_med_m:Float64}, {inp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {inp_p10_m:Float64} / {inp_med_m:Float64}, {inp_p10_d:Float64} / {inp_med_d:Float64})))) / 2, 0))
                 + {w_fcp:Float64} * if(has_fcp AND m['fcp'] <= 0, 1, if(has_fcp, (1 - erf(log(greatest(m['fcp'], 1e-9) / if(mobile, {fcp_med_m:Float64}, {fcp_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {fcp_p10_m:Float64} / {fcp_med_m:Float64}, {fcp_p10_d:Float64} / {fcp_med_d:Float64})))) / 2, 0))
                 + {w_cls:Float64} * if(has_cls AND m['cls'] <= 0, 1, if(has_cls, (1 - erf(log(greatest(m['cls'], 1e-9) / if(mobile, {cls_med_m:Float64}, {cls_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {cls_p10_m:Float64} / {cls_med_m:Float64}, {cls_p10_d:Float64} / {cls_med_d:Float64})))) / 2, 0))
                 + {w_ttfb:Float64} * if(has_ttfb AND m['ttfb'] <= 0, 1, if(has_ttfb, (1 - erf(log(greatest(m['ttfb'], 1e-9) / if(mobile, {ttfb_med_m:Float64}, {ttfb_med_d:Float64})) * 0.9061938024368232 / -log(if(mobile, {ttfb_p10_m:Float64} / {ttfb_med_m:Float64}, {ttfb_p10_d:Float64} / {ttfb_med_d:Float64})))) / 2, 0)))
                  / ({w_lcp:Float64} * has_lcp + {w_inp:Float64} * has_inp + {w_fcp:Float64} * has_fcp + {w_cls:Float64} * has_cls + {w_ttfb:Float64} * has_ttfb)) AS score
        FROM transactions AS t
        WHERE t.project_id = {project_id:UInt64} AND t.org_id = {org_id:UInt64}
          AND t.timestamp >= {since:DateTime64(3, 'UTC')} AND t.timestamp < {until:DateTime64(3, 'UTC')}
          AND t.op = 'pageload'
          AND ({environment:String} = '' OR t.environment = {environment:String})
          AND ({release:String} = '' OR t.release = {release:String})
          AND ({browser:String} = '' OR t.browser_name = {browser:String})
          AND ({page:String} = '' OR t.page = {page:String})
    ),
    med AS (SELECT quantileExactInclusive(0.5)(load_ms) AS v FROM loads)
SELECT * FROM
(
    SELECT 'fastest' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY load_ms ASC, event_id LIMIT 3
)
UNION ALL
SELECT * FROM
(
    SELECT 'median' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY abs(load_ms - (SELECT v FROM med)) ASC, event_id LIMIT 3
)
UNION ALL
SELECT * FROM
(
    SELECT 'slowest' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY load_ms DESC, event_id LIMIT 3
)
