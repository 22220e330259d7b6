-- Per page (is_total = 0) and for the whole project (is_total = 1), over the page loads of the window and filters
-- (the per-day and per-hour states and the edge hours' facts: macro pageload_window): views, averages, p75s from
-- the merged 1 % log histograms (linear interpolation, as polars; within 0.5 % of the exact), the count behind each
-- figure (a vital's NULL = not reported), and the mean score.
SELECT page, is_total, views, load_avg, p75s[1] AS load_p75, ttfb_avg, ttfb_n, p75s[2] AS ttfb_p75, dom_avg, dom_n,
       resource_avg, resource_n, api_calls_avg, p75s[3] AS lcp_p75, lcp_n, p75s[4] AS inp_p75, inp_n,
       p75s[5] AS cls_p75, cls_n, p75s[6] AS fcp_p75, fcp_n, score_mean, score_n
FROM
(
    SELECT page, grouping(page) AS is_total, sum(views) AS views, sum(load_sum) / views AS load_avg,
           sum(ttfb_sum) / ttfb_n AS ttfb_avg, sum(ttfb_n) AS ttfb_n, sum(dom_sum) / dom_n AS dom_avg,
           sum(dom_n) AS dom_n, sum(resource_sum) / resource_n AS resource_avg, sum(resource_n) AS resource_n,
           sum(api_calls) / views AS api_calls_avg, sum(lcp_n) AS lcp_n, sum(inp_n) AS inp_n, sum(cls_n) AS cls_n,
           sum(fcp_n) AS fcp_n, sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n,
           arrayMap(h -> arrayMap(${hist_quantile}, [h], [0.75])[1],
                    [sumMap(load_hist.1, load_hist.2), sumMap(ttfb_hist.1, ttfb_hist.2), sumMap(lcp_hist.1, lcp_hist.2),
                     sumMap(inp_hist.1, inp_hist.2), sumMap(cls_hist.1, cls_hist.2), sumMap(fcp_hist.1, fcp_hist.2)])
               AS p75s
    FROM ${pageload_window}
    GROUP BY GROUPING SETS ((page), ())
)
ORDER BY is_total DESC, views DESC, page
LIMIT 501
