-- Resources per type (JavaScript, CSS, Images, Fonts, API, Other) of the requests in [since, until) and filters
-- (`resource_facts`; the browser is the page load's): requests, page loads that fetched one, bytes (encoded body,
-- decoded body, transfer), load time (avg, exact p95), cache hits (transfer size 0 with a body: served from the
-- browser cache) and compression (decoded / encoded).
SELECT resource_type, count() AS requests, uniqExact(load_id) AS loads,
       sum(enc) AS total_bytes, avg(enc) AS avg_bytes, avg(dec) AS avg_decoded_bytes,
       avg(transfer_size) AS avg_transfer_bytes,
       avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
       count(transfer_size) AS transfer_n,
       countIf(transfer_size = 0 AND dec > 0) AS cache_hits,
       sumIf(dec, enc > 0) / nullIf(sumIf(enc, enc > 0), 0) AS compression_ratio
FROM resource_facts FINAL
WHERE ${pageload_filter}
GROUP BY resource_type
ORDER BY total_bytes DESC
