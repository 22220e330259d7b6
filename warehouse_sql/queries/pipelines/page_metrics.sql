-- Rebuild `page_metrics` for the days in [{start}, {end}) by merging the hours' states (page_hour_states,
-- refreshed first for the hours that received data). Exact percentiles (linear interpolation between order
-- statistics, as numpy/polars "linear"): the states keep every value. A page counts on a day when it had page
-- loads, navigations or INP interactions; API figures are its page loads' and navigations' http.client calls.
INSERT INTO page_metrics
SELECT
    org_id, project_id, page, day, m_views,
    if(m_load_n = 0, NULL, m_load_sum / m_load_n), if(m_load_n = 0, NULL, lq[1]), if(m_load_n = 0, NULL, lq[2]),
    if(m_load_n = 0, NULL, lq[3]),
    if(m_ttfb_n = 0, NULL, m_ttfb_sum / m_ttfb_n), if(m_ttfb_n = 0, NULL, tq[1]), if(m_ttfb_n = 0, NULL, tq[2]),
    if(m_ttfb_n = 0, NULL, tq[3]),
    if(m_dom_n = 0, NULL, m_dom_sum / m_dom_n), if(m_dom_n = 0, NULL, dq[1]), if(m_dom_n = 0, NULL, dq[2]),
    if(m_dom_n = 0, NULL, dq[3]),
    if(m_res_n = 0, NULL, m_res_sum / m_res_n), if(m_res_n = 0, NULL, rq[1]), if(m_res_n = 0, NULL, rq[2]),
    if(m_res_n = 0, NULL, rq[3]),
    m_api_calls,
    if(m_api_calls = 0, NULL, m_api_sum / m_api_calls), if(m_api_calls = 0, NULL, aq[1]), if(m_api_calls = 0, NULL, aq[2]),
    if(m_api_calls = 0, NULL, aq[3]),
    if(m_lcp_n = 0, NULL, lcp_p75[1]), if(m_cls_n = 0, NULL, cls_p75[1]), if(m_inp_n = 0, NULL, inp_p75[1]),
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT max(org_id) AS org_id, project_id, page, toDate(hour) AS day, sum(samples) AS n_samples,
           sum(views) AS m_views,
           sum(load_n) AS m_load_n, sum(load_sum) AS m_load_sum,
           quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(load_q) AS lq,
           sum(ttfb_n) AS m_ttfb_n, sum(ttfb_sum) AS m_ttfb_sum,
           quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(ttfb_q) AS tq,
           sum(dom_n) AS m_dom_n, sum(dom_sum) AS m_dom_sum,
           quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(dom_q) AS dq,
           sum(res_n) AS m_res_n, sum(res_sum) AS m_res_sum,
           quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(res_q) AS rq,
           sum(api_calls) AS m_api_calls, sum(api_sum) AS m_api_sum,
           quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(api_q) AS aq,
           sum(lcp_n) AS m_lcp_n, quantilesExactInclusiveMerge(0.75)(lcp_q) AS lcp_p75,
           sum(cls_n) AS m_cls_n, quantilesExactInclusiveMerge(0.75)(cls_q) AS cls_p75,
           sum(inp_n) AS m_inp_n, quantilesExactInclusiveMerge(0.75)(inp_q) AS inp_p75
    FROM page_hour_states FINAL
    WHERE hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
    GROUP BY project_id, page, day
)
WHERE n_samples > 0
