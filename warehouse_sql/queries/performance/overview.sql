-- The overview in one read of the window and filters (macro pageload_window): per page (is_page = 1), for the
-- whole project (both 0) and per day (is_day = 1) the figures of pages.sql and daily.sql, computed alike (views,
-- averages, p75s of the merged 1 % log histograms, counts, mean score).
SELECT page, day, grouping(page) = 0 AS is_page, grouping(day) = 0 AS is_day, sum(views) AS views,
       sum(load_sum) / views AS load_avg,
       quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
       sum(ttfb_sum) / ttfb_n AS ttfb_avg, sum(ttfb_n) AS ttfb_n,
       quantileExactWeightedInterpolatedArray(0.75)(ttfb_hist.1, ttfb_hist.2) AS ttfb_p75,
       sum(dom_sum) / dom_n AS dom_avg, sum(dom_n) AS dom_n,
       quantileExactWeightedInterpolatedArray(0.75)(dom_hist.1, dom_hist.2) AS dom_p75,
       sum(resource_sum) / resource_n AS resource_avg, sum(resource_n) AS resource_n,
       sum(api_calls) / views AS api_calls_avg,
       quantileExactWeightedInterpolatedArray(0.75)(lcp_hist.1, lcp_hist.2) AS lcp_p75, sum(lcp_n) AS lcp_n,
       quantileExactWeightedInterpolatedArray(0.75)(inp_hist.1, inp_hist.2) AS inp_p75, sum(inp_n) AS inp_n,
       quantileExactWeightedInterpolatedArray(0.75)(cls_hist.1, cls_hist.2) AS cls_p75, sum(cls_n) AS cls_n,
       quantileExactWeightedInterpolatedArray(0.75)(fcp_hist.1, fcp_hist.2) AS fcp_p75, sum(fcp_n) AS fcp_n,
       sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n
FROM ${pageload_window}
GROUP BY GROUPING SETS ((page), (), (day))
ORDER BY is_day, is_page, if(is_day, 0, views) DESC, page, day
LIMIT 501 BY is_day
SETTINGS ${view_settings}
