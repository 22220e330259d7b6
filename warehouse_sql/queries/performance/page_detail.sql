-- One page's series in one read of the window and filters (macro pageload_window, page set, single days): per day
-- (kind 'day') the figures of daily.sql and per ISO week (kind 'week') those of weekly.sql, computed alike. The
-- caller orders the days and weeks; its distribution and samples come from page_totals.sql, read at the same time.
SELECT if(grouping(day) = 0, 'day', 'week') AS kind, '' AS key, day, toMonday(day) AS week_start,
       toISOYear(day) AS iso_year, toISOWeek(day) AS iso_week, sum(views) AS views,
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
GROUP BY GROUPING SETS ((day), (week_start, iso_year, iso_week))
LIMIT 1000
SETTINGS ${view_settings}
