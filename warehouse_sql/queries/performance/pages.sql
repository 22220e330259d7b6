-- Per page (is_total = 0) and for the whole project (is_total = 1), over the page loads of the window and filters
-- (`pageload_facts`, one row per page load): views, averages, exact p75s (linear interpolation, as polars), the
-- count behind each figure (a vital's NULL = not reported), and the mean score.
SELECT page, grouping(page) AS is_total,
       count() AS views,
       avg(load_ms) AS load_avg, quantileExactInclusive(0.75)(load_ms) AS load_p75,
       avg(ttfb) AS ttfb_avg, count(ttfb) AS ttfb_n, quantileExactInclusive(0.75)(ttfb) AS ttfb_p75,
       avg(dom_ready) AS dom_avg, count(dom_ready) AS dom_n,
       avg(resource_ms) AS resource_avg, count(resource_ms) AS resource_n,
       avg(api_calls) AS api_calls_avg,
       quantileExactInclusive(0.75)(lcp) AS lcp_p75, count(lcp) AS lcp_n,
       quantileExactInclusive(0.75)(inp) AS inp_p75, count(inp) AS inp_n,
       quantileExactInclusive(0.75)(cls) AS cls_p75, count(cls) AS cls_n,
       quantileExactInclusive(0.75)(fcp) AS fcp_p75, count(fcp) AS fcp_n,
       avg(score) AS score_mean, count(score) AS score_n
FROM pageload_facts FINAL
WHERE ${pageload_filter}
GROUP BY GROUPING SETS ((page), ())
ORDER BY is_total DESC, views DESC, page
LIMIT 501
