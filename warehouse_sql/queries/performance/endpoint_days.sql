-- One API endpoint (source, method, parameterised path) per day of [since, until) and filters (the endpoint_window
-- macro: the day, hour and minute states that tile the window): calls, avg and p95 duration
-- (within 0.5 % of exact), outcomes, response bytes, the most calls one page load made to it, the page loads
-- calling it, the pages that call it, and the day's 5 slowest calls (−duration, event id of the page load or
-- server transaction, start, status code, description; the slowest first) — the view's 5 slowest calls are the
-- slowest of these, so the endpoint detail is one query.
SELECT source, method, path, day AS day_key,
       sum(calls) AS calls, sum(duration_sum) / calls AS avg_ms, ${duration_p95} AS p95_ms,
       sum(s2xx) AS s2xx, sum(s3xx) AS s3xx, sum(s4xx) AS s4xx, sum(s5xx) AS s5xx, sum(no_status) AS no_status,
       if(sum(bytes_n) = 0, NULL, sum(bytes_sum) / sum(bytes_n)) AS avg_bytes,
       max(max_per_load) AS max_per_load, sum(loads) AS loads,
       arraySort(groupUniqArrayArray(10)(pages)) AS pages,
       groupArraySortedArray(5)(slowest) AS slowest
FROM ${endpoint_window}
GROUP BY source, method, path, day
ORDER BY day
SETTINGS ${view_settings}
