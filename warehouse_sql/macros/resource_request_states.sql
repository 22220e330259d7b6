-- The per-key aggregates of an hour or a minute of `resource_request_periods`, over `resource_facts` rows that carry
-- `first_of_resource` and `first_of_type` (the row is its page load's first request of that resource / type). Shared
-- by the hourly and the per-minute fills so both count the same way. Used after the key columns.
count() AS requests, countIf(first_of_resource) AS loads, countIf(first_of_type) AS type_loads,
sum(enc) AS total_bytes, max(enc) AS max_bytes, sum(dec) AS decoded_bytes,
sum(coalesce(transfer_size, 0)) AS transfer_bytes, count(transfer_size) AS transfer_n,
sum(duration_ms) AS duration_sum,
sumMap([${duration_hist_key}], [toUInt64(1)]) AS dur_hist,
countIf(blocking_status = 'blocking') AS blocking, countIf(blocking_status = 'non-blocking') AS non_blocking,
countIf(blocking_status NOT IN ('blocking', 'non-blocking')) AS unknown,
countIf(transfer_size = 0 AND dec > 0) AS cache_hits,
sumIf(duration_ms / fcp, blocking_status = 'blocking' AND fcp > 0) AS fcp_share_sum,
countIf(blocking_status = 'blocking' AND fcp > 0) AS fcp_share_n,
sumIf(dec, enc > 0) AS compressed_dec, sumIf(enc, enc > 0) AS compressed_enc,
groupUniqArray(10)(page) AS pages
