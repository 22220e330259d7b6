-- The resources of [since, until) and filters (the 500 heaviest by total bytes; URL without query string), as
-- resource_table.sql gives them but without their load-time p95 (NULL): what the recommendations read. The
-- load-time histograms are neither read nor merged, the largest part of the table's work.
SELECT 'resource' AS kind, resource_type, resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms,
       NULL AS p95_ms, blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages
FROM
(
    SELECT resource_type, resource, ${resource_row_sums}
    FROM ${resource_window}
    WHERE resource != ''
    GROUP BY resource_type, resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
SETTINGS ${view_settings}
