-- Per day (UTC) and, when by_page = 1, per page, over the page loads of the window and filters (macro
-- pageload_window): views, p75 of each metric from the merged 1 % log histograms with its count (NULL = not
-- reported), mean score.
SELECT if({by_page:UInt8} = 1, page, '') AS key, day, sum(views) AS views,
       quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
       sum(load_sum) / views AS load_avg,
       quantileExactWeightedInterpolatedArray(0.75)(ttfb_hist.1, ttfb_hist.2) AS ttfb_p75, sum(ttfb_n) AS ttfb_n,
       quantileExactWeightedInterpolatedArray(0.75)(dom_hist.1, dom_hist.2) AS dom_p75, sum(dom_n) AS dom_n,
       quantileExactWeightedInterpolatedArray(0.75)(lcp_hist.1, lcp_hist.2) AS lcp_p75, sum(lcp_n) AS lcp_n,
       quantileExactWeightedInterpolatedArray(0.75)(inp_hist.1, inp_hist.2) AS inp_p75, sum(inp_n) AS inp_n,
       quantileExactWeightedInterpolatedArray(0.75)(cls_hist.1, cls_hist.2) AS cls_p75, sum(cls_n) AS cls_n,
       quantileExactWeightedInterpolatedArray(0.75)(fcp_hist.1, fcp_hist.2) AS fcp_p75, sum(fcp_n) AS fcp_n,
       sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n
FROM ${pageload_window}
GROUP BY key, day
ORDER BY key, day
LIMIT 50000
SETTINGS ${view_settings}
