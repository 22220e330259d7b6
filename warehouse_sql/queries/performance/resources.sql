-- The resources view in one read of the requests in [since, until) and filters (the resource_window macro: daily
-- and hourly states plus the partial edge hours; the browser is the page load's): per resource type (kind
-- 'type', keyed by the type; fetch/XHR calls count here only) and per resource (kind 'resource', URL without query
-- string, the 500 heaviest by total bytes): each state row of the window counts once for its type and once for
-- its resource (ARRAY JOIN), one aggregation for both, so one query to analyse and one read of the states.
-- full = 0: the resources alone and no load-time p95 (what the recommendations need): the constant condition
-- leaves the histograms unread, the largest part of the query's work.
--   requests, page loads that fetched it (per type: its first request of the type), bytes (encoded body, decoded
--   body, transfer), load time (avg, p95 within 0.5 % of exact), cache hits (transfer size 0 with a body: served
--   from the browser cache), compression (decoded / encoded)
--   per resource also: its largest body, render-blocking status counted per load (blocking / non-blocking /
--   unknown: browsers other than Chromium do not report it), the mean share of the page's FCP its blocking
--   loads took, the pages that load it, and whether its host is another than the pages' own (third party, from
--   the page hosts of every resource of the window)
SELECT kind, type_of AS resource_type, key AS resource, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms, p95_ms,
       blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, compression_ratio, pages
FROM
(
    SELECT kind, if(kind = 'type', resource_type, resource) AS key, any(resource_type) AS type_of,
           any(host) AS host, sum(requests) AS requests, sum(if(kind = 'type', type_loads, loads)) AS loads,
           sum(total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes, max(max_bytes) AS max_bytes,
           sum(decoded_bytes) / requests AS avg_decoded_bytes,
           if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
           sum(duration_sum) / requests AS avg_ms,
           -- the duration_p95 macro's aggregate, its arguments empty without `full` (the histograms unread)
           quantileExactWeightedInterpolatedArray(0.95)(
               if({full:UInt8} = 1, arrayMap(k -> if(k = -100000, 0., exp(k / 100)), dur_hist.1), []),
               if({full:UInt8} = 1, dur_hist.2, [])) AS p95_ms,
           sum(blocking) AS blocking, sum(non_blocking) AS non_blocking, sum(unknown) AS unknown,
           sum(cache_hits) AS cache_hits, sum(transfer_n) AS transfer_n,
           if(blocking > 0 AND sum(fcp_share_n) > 0, sum(fcp_share_sum) / sum(fcp_share_n), NULL) AS fcp_share,
           sum(compressed_dec) / nullIf(sum(compressed_enc), 0) AS compression_ratio,
           groupUniqArrayArray(10)(pages) AS pages,
           arrayDistinct(arrayFlatten(groupArray(groupUniqArrayIf(page_host, page_host != '')) OVER (PARTITION BY kind)))
               AS own_hosts
    FROM ${resource_window}
    ARRAY JOIN if({full:UInt8} = 1, ['type', 'resource'], ['resource']) AS kind
    WHERE kind = 'type' OR resource != ''
    GROUP BY kind, key
    ORDER BY kind, total_bytes DESC, key
    LIMIT 500 BY kind
)
ORDER BY kind, total_bytes DESC, resource
