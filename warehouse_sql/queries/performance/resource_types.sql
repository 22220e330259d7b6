-- Resources per type (JavaScript, CSS, Images, Fonts, API, Other) of the requests in [since, until) and filters
-- (the resource_window macro: hourly states plus the partial edge hours; the browser is the page load's): requests, page
-- loads that fetched one, bytes (encoded body, decoded body, transfer), load time (avg, p95 within 0.5 % of exact),
-- cache hits (transfer size 0 with a body: served from the browser cache) and compression (decoded / encoded).
SELECT resource_type, sum(requests) AS requests, sum(type_loads) AS loads,
       sum(total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes, sum(decoded_bytes) / requests AS avg_decoded_bytes,
       if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
       sum(duration_sum) / requests AS avg_ms, sumMap(dur_hist.1, dur_hist.2) AS hist, ${duration_p95} AS p95_ms,
       sum(transfer_n) AS transfer_n, sum(cache_hits) AS cache_hits,
       sum(compressed_dec) / nullIf(sum(compressed_enc), 0) AS compression_ratio
FROM ${resource_window}
GROUP BY resource_type
ORDER BY total_bytes DESC
