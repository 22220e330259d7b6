-- The resources of resources.sql (the 500 heaviest of [since, until) and filters, same columns and figures)
-- without their load-time p95 (NULL) and without the per-type rows: what the recommendations read. The
-- histograms are neither read nor merged, the largest part of the resources query's work.
SELECT 'resource' AS kind, resource_type, resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms,
       NULL AS p95_ms, blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages
FROM
(
    SELECT resource_type, resource, any(host) AS host, sum(requests) AS requests,
           sum(loads) AS loads, sum(total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes,
           max(max_bytes) AS max_bytes, sum(decoded_bytes) / requests AS avg_decoded_bytes,
           if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
           sum(duration_sum) / requests AS avg_ms,
           sum(blocking) AS blocking, sum(non_blocking) AS non_blocking, sum(unknown) AS unknown,
           sum(cache_hits) AS cache_hits, sum(transfer_n) AS transfer_n,
           if(blocking > 0 AND sum(fcp_share_n) > 0, sum(fcp_share_sum) / sum(fcp_share_n), NULL) AS fcp_share,
           sum(compressed_dec) / nullIf(sum(compressed_enc), 0) AS compression_ratio,
           groupUniqArrayArray(10)(pages) AS pages,
           arrayDistinct(arrayFlatten(groupArray(groupUniqArrayIf(page_host, page_host != '')) OVER ()))
               AS own_hosts
    FROM ${resource_window}
    WHERE resource != ''
    GROUP BY resource_type, resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
