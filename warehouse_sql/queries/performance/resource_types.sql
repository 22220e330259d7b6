-- The resources view's per-type rows over [since, until) and filters (the resource_window macro; fetch/XHR calls
-- count here only): requests, page loads that fetched the type (a page load's first request of it), bytes
-- (total, average encoded / decoded / transfer), load time (avg, p95 within 0.5 % of exact: macro duration_p95),
-- cache hits over the requests that report a transfer size, compression (decoded / encoded). Read beside
-- resource_table.sql.
SELECT 'type' AS kind, resource_type, sum(requests) AS requests, sum(type_loads) AS loads,
       sum(total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes,
       sum(decoded_bytes) / requests AS avg_decoded_bytes,
       if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
       sum(duration_sum) / requests AS avg_ms, ${duration_p95} AS p95_ms, sum(cache_hits) AS cache_hits,
       sum(transfer_n) AS transfer_n, sum(compressed_dec) / nullIf(sum(compressed_enc), 0) AS compression_ratio
FROM ${resource_window}
GROUP BY resource_type
ORDER BY total_bytes DESC, resource_type
LIMIT 500
SETTINGS ${view_settings}
