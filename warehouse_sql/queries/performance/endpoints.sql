-- API endpoints of [since, until) and filters (the endpoint_window macro: the day, hour and minute states that tile
-- the window; server transactions and browser calls, per source, method and parameterised
-- path): calls, avg and p95 duration (within 0.5 % of exact), outcomes, response bytes, the most calls one page
-- load made to it (fan-out), the page loads calling it and the pages that call it. The browser filter keeps
-- client calls of page loads from that browser (server transactions have no browser). One endpoint per day:
-- endpoint_days.
SELECT source, method, path,
       sum(calls) AS calls, sum(duration_sum) / calls AS avg_ms, ${duration_p95} AS p95_ms,
       sum(s2xx) AS s2xx, sum(s3xx) AS s3xx, sum(s4xx) AS s4xx, sum(s5xx) AS s5xx, sum(no_status) AS no_status,
       if(sum(bytes_n) = 0, NULL, sum(bytes_sum) / sum(bytes_n)) AS avg_bytes,
       max(max_per_load) AS max_per_load, sum(loads) AS loads,
       arraySort(groupUniqArrayArray(10)(pages)) AS pages
FROM ${endpoint_window}
GROUP BY source, method, path
ORDER BY calls DESC, source, method, path
LIMIT 2000
SETTINGS ${view_settings}
