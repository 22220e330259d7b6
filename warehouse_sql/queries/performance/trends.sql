-- The trends view in one read of the window and filters (macro pageload_window): per ISO week for the whole
-- project (key '') and per page and ISO week, the figures of weekly.sql computed alike.
SELECT if(grouping(page) = 0, page, '') AS key, grouping(page) = 0 AS is_page, toMonday(day) AS week_start,
       toISOYear(day) AS iso_year, toISOWeek(day) AS iso_week, sum(views) AS views,
       sum(load_sum) / views AS load_avg,
       quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
       quantileExactWeightedInterpolatedArray(0.75)(lcp_hist.1, lcp_hist.2) AS lcp_p75, sum(lcp_n) AS lcp_n,
       sum(score_sum) / score_n AS score_mean, sum(score_n) AS score_n
FROM ${pageload_window}
GROUP BY GROUPING SETS ((week_start, iso_year, iso_week), (page, week_start, iso_year, iso_week))
ORDER BY is_page, key, week_start
LIMIT 20000
SETTINGS ${view_settings}
