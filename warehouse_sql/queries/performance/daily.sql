-- Per day (UTC) and, when by_page = 1, per page, over the page loads of the window and filters (macro
-- pageload_window): views, p75 of each metric from the merged 1 % log histograms with its count (NULL = not
-- reported), mean score.
SELECT key, day, views, p75s[1] AS load_p75, load_avg, p75s[2] AS ttfb_p75, ttfb_n, p75s[3] AS dom_p75, dom_n,
       p75s[4] AS lcp_p75, lcp_n, p75s[5] AS inp_p75, inp_n, p75s[6] AS cls_p75, cls_n, p75s[7] AS fcp_p75, fcp_n,
       score_mean, score_n
FROM
(
    SELECT if({by_page:UInt8} = 1, page, '') AS key, day, sum(views) AS views, sum(load_sum) / views AS load_avg,
           sum(ttfb_n) AS ttfb_n, sum(dom_n) AS dom_n, sum(lcp_n) AS lcp_n, sum(inp_n) AS inp_n, sum(cls_n) AS cls_n,
           sum(fcp_n) AS fcp_n, sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n,
           arrayMap(h -> arrayMap(${hist_quantile}, [h], [0.75])[1],
                    [sumMap(load_hist.1, load_hist.2), sumMap(ttfb_hist.1, ttfb_hist.2), sumMap(dom_hist.1, dom_hist.2),
                     sumMap(lcp_hist.1, lcp_hist.2), sumMap(inp_hist.1, inp_hist.2), sumMap(cls_hist.1, cls_hist.2),
                     sumMap(fcp_hist.1, fcp_hist.2)])
               AS p75s
    FROM ${pageload_window}
    GROUP BY key, day
)
ORDER BY key, day
LIMIT 50000
