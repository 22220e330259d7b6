-- The per-key aggregates of an hour or a minute of `endpoint_call_periods`, over `endpoint_facts` rows that carry
-- `first_of_load` (the row is its page load's first call of the endpoint) and `per_load` (the load's calls of it).
-- Shared by the hourly and the per-minute fills so both count the same way. Used after the key columns.
count() AS calls, countIf(first_of_load AND source = 'client') AS loads, sum(duration_ms) AS duration_sum,
sumMap([${duration_hist_key}], [toUInt64(1)]) AS dur_hist,
countIf(status_code BETWEEN 200 AND 299) AS s2xx, countIf(status_code BETWEEN 300 AND 399) AS s3xx,
countIf(status_code BETWEEN 400 AND 499) AS s4xx, countIf(status_code BETWEEN 500 AND 599) AS s5xx,
countIf(status_code = 0) AS no_status, sum(coalesce(bytes, 0)) AS bytes_sum, count(bytes) AS bytes_n,
max(per_load) AS max_per_load, groupUniqArrayIf(10)(page, page != '') AS pages
