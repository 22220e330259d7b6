-- The resources view's table: the resources of [since, until) and filters (the resource_window macro: the
-- periods that tile the window, minutes at its partial edge hours; the browser is the page load's), the
-- 500 heaviest by total bytes (URL without query string): requests, page loads that fetched it, bytes (encoded,
-- largest, decoded, transfer), load time (avg, p95 within 0.5 % of exact: macro duration_p95), render-blocking
-- status counted per load (blocking / non-blocking / unknown: browsers other than Chromium do not report it), the
-- mean share of the page's FCP its blocking loads took, cache hits (transfer size 0 with a body), compression
-- (decoded / encoded), the pages that load it, and whether its host is another than the pages' own (third party,
-- from the page hosts of every resource of the window). Read beside resource_types.sql.
SELECT 'resource' AS kind, resource_type, resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms, p95_ms,
       blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages
FROM
(
    SELECT resource_type, resource, ${resource_row_sums}, ${duration_p95} AS p95_ms
    FROM ${resource_window}
    WHERE resource != ''
    GROUP BY resource_type, resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
SETTINGS ${view_settings}
