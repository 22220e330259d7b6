SELECT page, count() AS page_loads, round(quantile(0.75)(lcp)) AS lcp_p75_ms
FROM pageload_facts
WHERE ts >= {since:DateTime} AND ts < {until:DateTime} AND environment = 'production'
GROUP BY page
ORDER BY lcp_p75_ms DESC
LIMIT 10
