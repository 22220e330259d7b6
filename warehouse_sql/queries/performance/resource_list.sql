-- The resources of [since, until) and filters (the 500 heaviest by total bytes; URL without query string), as
-- resource_table.sql gives them but without their load-time p95 (NULL): what the recommendations read. The
-- load-time histograms are neither read nor merged, the largest part of the table's work. Besides: the releases
-- that served each resource with the first period each did (`release_first`: release → epoch seconds) and its
-- last period (`last_seen`), from which the recommendations tell a resource the newest release still serves from
-- one of an old release (read with single days, so a period's start is a day, an hour or a minute).
SELECT 'resource' AS kind, resource_type, resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms,
       NULL AS p95_ms, blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages,
       release_first, last_seen
FROM
(
    SELECT resource_type, resource, ${resource_row_sums},
           minMap([toString(release)], [toUInt32(start)]) AS release_first, max(start) AS last_seen
    FROM ${resource_window}
    WHERE resource != ''
    GROUP BY resource_type, resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
SETTINGS ${view_settings}
