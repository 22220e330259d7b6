-- Per ISO week (week_start = its Monday) and, when by_page = 1, per page, over the page loads of the window and
-- filters (`pageload_facts`): views, load average and exact p75, LCP p75 and the mean score.
SELECT if({by_page:UInt8} = 1, page, '') AS key, toMonday(ts) AS week_start,
       toISOYear(ts) AS iso_year, toISOWeek(ts) AS iso_week, count() AS views,
       avg(load_ms) AS load_avg, quantileExactInclusive(0.75)(load_ms) AS load_p75,
       quantileExactInclusive(0.75)(lcp) AS lcp_p75, count(lcp) AS lcp_n,
       avg(score) AS score_mean, count(score) AS score_n
FROM pageload_facts FINAL
WHERE ${pageload_filter}
GROUP BY key, week_start, iso_year, iso_week
ORDER BY key, week_start
LIMIT 10000
