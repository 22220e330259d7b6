SELECT browser, count() AS page_loads, round(quantile(0.75)(lcp)) AS lcp_p75_ms
FROM pageload_facts
WHERE ts >= {since:DateTime} AND ts < {until:DateTime}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ($page = '' OR page = $page)
GROUP BY browser
ORDER BY page_loads DESC
