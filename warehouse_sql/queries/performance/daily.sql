-- Per day (UTC) and, when by_page = 1, per page, over the page loads of the window and filters
-- (`pageload_facts`): views, exact p75 of each metric with its count (NULL = not reported), mean score.
SELECT if({by_page:UInt8} = 1, page, '') AS key, toDate(ts) AS day, count() AS views,
       quantileExactInclusive(0.75)(load_ms) AS load_p75, avg(load_ms) AS load_avg,
       quantileExactInclusive(0.75)(ttfb) AS ttfb_p75, count(ttfb) AS ttfb_n,
       quantileExactInclusive(0.75)(dom_ready) AS dom_p75, count(dom_ready) AS dom_n,
       quantileExactInclusive(0.75)(lcp) AS lcp_p75, count(lcp) AS lcp_n,
       quantileExactInclusive(0.75)(inp) AS inp_p75, count(inp) AS inp_n,
       quantileExactInclusive(0.75)(cls) AS cls_p75, count(cls) AS cls_n,
       quantileExactInclusive(0.75)(fcp) AS fcp_p75, count(fcp) AS fcp_n,
       avg(score) AS score_mean, count(score) AS score_n
FROM pageload_facts FINAL
WHERE ${pageload_filter}
GROUP BY key, day
ORDER BY key, day
LIMIT 50000
