-- API endpoints of [since, until) and filters (`endpoint_facts`: server transactions and browser calls, per source,
-- method and parameterised path): calls, avg and exact p95 duration, outcomes, response bytes, the most calls one
-- page load made to it (fan-out) and the pages that call it. With endpoint_path set, only that (source, method,
-- path), per day (by_day = 1). The browser filter keeps client calls of page loads from that browser (server
-- transactions have no browser).
SELECT source, method, path, if({by_day:UInt8} = 1, toDate(ts), toDate(0)) AS day,
       count() AS calls, avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
       countIf(status_code BETWEEN 200 AND 299) AS s2xx, countIf(status_code BETWEEN 300 AND 399) AS s3xx,
       countIf(status_code BETWEEN 400 AND 499) AS s4xx, countIf(status_code BETWEEN 500 AND 599) AS s5xx,
       countIf(status_code = 0) AS no_status,
       avg(bytes) AS avg_bytes,
       max(per_load) AS max_per_load, uniqExactIf(tx, source = 'client') AS loads,
       arraySort(groupUniqArrayIf(10)(page, page != '')) AS pages
FROM
(
    SELECT toString(source) AS source, toString(method) AS method, path, ts, duration_ms, status_code, bytes, tx,
           page, count() OVER (PARTITION BY source, method, path, tx) AS per_load
    FROM endpoint_facts FINAL
    WHERE ${pageload_filter}
      AND ({endpoint_path:String} = ''
           OR (source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}))
)
GROUP BY source, method, path, day
ORDER BY calls DESC, source, method, path, day
LIMIT 2000
