-- Per page (is_total = 0) and for the whole project (is_total = 1), over the page loads of the window and filters
-- (the day, hour and minute states that tile the window: macro pageload_window): views, averages, p75s of the
-- merged 1 % log histograms (linear interpolation, as polars; within 0.5 % of the exact), the count behind each
-- figure (a vital's NULL = not reported), and the mean score.
SELECT page, grouping(page) AS is_total, sum(views) AS views, sum(load_sum) / views AS load_avg,
       quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
       sum(ttfb_sum) / ttfb_n AS ttfb_avg, sum(ttfb_n) AS ttfb_n,
       quantileExactWeightedInterpolatedArray(0.75)(ttfb_hist.1, ttfb_hist.2) AS ttfb_p75,
       sum(dom_sum) / dom_n AS dom_avg, sum(dom_n) AS dom_n,
       sum(resource_sum) / resource_n AS resource_avg, sum(resource_n) AS resource_n,
       sum(api_calls) / views AS api_calls_avg,
       quantileExactWeightedInterpolatedArray(0.75)(lcp_hist.1, lcp_hist.2) AS lcp_p75, sum(lcp_n) AS lcp_n,
       quantileExactWeightedInterpolatedArray(0.75)(inp_hist.1, inp_hist.2) AS inp_p75, sum(inp_n) AS inp_n,
       quantileExactWeightedInterpolatedArray(0.75)(cls_hist.1, cls_hist.2) AS cls_p75, sum(cls_n) AS cls_n,
       quantileExactWeightedInterpolatedArray(0.75)(fcp_hist.1, fcp_hist.2) AS fcp_p75, sum(fcp_n) AS fcp_n,
       sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n
FROM ${pageload_window}
GROUP BY GROUPING SETS ((page), ())
ORDER BY is_total DESC, views DESC, page
LIMIT 501
SETTINGS ${view_settings}
