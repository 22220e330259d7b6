-- The resources view in one read of the requests in [since, until) and filters (the resource_window macro: daily
-- and hourly states plus the partial edge hours; the browser is the page load's): per resource type (kind
-- 'type', keyed by the type; fetch/XHR calls count here only) and per resource (kind 'resource', URL without query
-- string, the 500 heaviest by total bytes).
--   requests, page loads that fetched it (per type: its first request of the type), bytes (encoded body, decoded
--   body, transfer), load time (avg, p95 within 0.5 % of exact), cache hits (transfer size 0 with a body: served
--   from the browser cache), compression (decoded / encoded)
--   per resource also: its largest body, render-blocking status counted per load (blocking / non-blocking /
--   unknown: browsers other than Chromium do not report it), the mean share of the page's FCP its blocking
--   loads took, the pages that load it, and whether its host is another than the pages' own (third party, from
--   the page hosts of every resource of the window)
-- Two levels, so every state row is aggregated once: the inner level merges the window's rows per resource
-- (sums, and the load-time histograms into one weighted-quantile state per resource); the outer level's grouping
-- sets give each resource its row from its own state and each type its row by merging its resources' states
-- (a few hundred (value, count) pairs each instead of every row's histogram again). resource_list.sql is the
-- same list without load-time p95 and types (what the recommendations read).
SELECT kind, type_of AS resource_type, key AS resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms, p95_ms,
       blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages
FROM
(
    SELECT if(grouping(resource) = 0, 'resource', 'type') AS kind, if(kind = 'type', resource_type, resource) AS key,
           resource_type AS type_of, any(r_host) AS host, sum(r_requests) AS requests,
           if(kind = 'type', sum(r_type_loads), sum(r_loads)) AS loads,
           sum(r_total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes, max(r_max_bytes) AS max_bytes,
           sum(r_decoded_bytes) / requests AS avg_decoded_bytes,
           if(transfer_n = 0, NULL, sum(r_transfer_bytes) / transfer_n) AS avg_transfer_bytes,
           sum(r_duration_sum) / requests AS avg_ms,
           quantileExactWeightedInterpolatedArrayMerge(0.95)(dur_state) AS p95_ms,
           sum(r_blocking) AS blocking, sum(r_non_blocking) AS non_blocking, sum(r_unknown) AS unknown,
           sum(r_cache_hits) AS cache_hits, sum(r_transfer_n) AS transfer_n,
           if(blocking > 0 AND sum(r_fcp_share_n) > 0, sum(r_fcp_share_sum) / sum(r_fcp_share_n), NULL) AS fcp_share,
           sum(r_compressed_dec) / nullIf(sum(r_compressed_enc), 0) AS compression_ratio,
           groupUniqArrayArray(10)(r_pages) AS pages,
           arrayDistinct(arrayFlatten(groupArray(groupUniqArrayArray(r_page_hosts)) OVER (PARTITION BY kind)))
               AS own_hosts
    FROM
    (
        SELECT resource_type, resource, any(host) AS r_host, sum(requests) AS r_requests, sum(loads) AS r_loads,
               sum(type_loads) AS r_type_loads, sum(total_bytes) AS r_total_bytes, max(max_bytes) AS r_max_bytes,
               sum(decoded_bytes) AS r_decoded_bytes, sum(transfer_bytes) AS r_transfer_bytes,
               sum(transfer_n) AS r_transfer_n, sum(duration_sum) AS r_duration_sum,
               -- the duration_p95 macro's aggregate, as a state to merge
               quantileExactWeightedInterpolatedArrayState(0.95)(
                   arrayMap(k -> if(k = -100000, 0., exp(k / 100)), dur_hist.1), dur_hist.2) AS dur_state,
               sum(blocking) AS r_blocking, sum(non_blocking) AS r_non_blocking, sum(unknown) AS r_unknown,
               sum(cache_hits) AS r_cache_hits, sum(fcp_share_sum) AS r_fcp_share_sum,
               sum(fcp_share_n) AS r_fcp_share_n, sum(compressed_dec) AS r_compressed_dec,
               sum(compressed_enc) AS r_compressed_enc, groupUniqArrayArray(10)(pages) AS r_pages,
               groupUniqArrayIf(page_host, page_host != '') AS r_page_hosts
        FROM ${resource_window}
        GROUP BY resource_type, resource
    )
    GROUP BY GROUPING SETS ((resource_type), (resource_type, resource))
    HAVING kind = 'type' OR key != ''
    ORDER BY kind, total_bytes DESC, key
    LIMIT 500 BY kind
)
ORDER BY kind, total_bytes DESC, resource
