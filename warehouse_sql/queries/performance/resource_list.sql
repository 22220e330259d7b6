-- Each resource (URL without query string; not fetch/XHR calls) of the requests in [since, until) and filters
-- (the resource_window macro: hourly states plus the partial edge hours): its type, requests, page loads, sizes, load
-- time (avg, p95 within 0.5 % of exact), render-blocking status counted per load (blocking / non-blocking /
-- unknown: browsers other than Chromium do not report it), cache hits, the mean share of the page's FCP its
-- blocking loads took, the pages that load it, and whether its host is another than the pages' own (third
-- party, from the page hosts of every resource of the window). The 500 heaviest by total bytes.
SELECT resource, resource_type, host, host != '' AND NOT has(own_hosts, host) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms, p95_ms,
       blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, pages
FROM
(
    SELECT resource, any(resource_type) AS resource_type, any(host) AS host,
           sum(requests) AS requests, sum(loads) AS loads,
           sum(total_bytes) AS total_bytes, total_bytes / requests AS avg_bytes, max(max_bytes) AS max_bytes,
           sum(decoded_bytes) / requests AS avg_decoded_bytes,
           if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
           sum(duration_sum) / requests AS avg_ms, sumMap(dur_hist.1, dur_hist.2) AS hist, ${duration_p95} AS p95_ms,
           sum(blocking) AS blocking, sum(non_blocking) AS non_blocking, sum(unknown) AS unknown,
           sum(cache_hits) AS cache_hits, sum(transfer_n) AS transfer_n,
           if(blocking > 0 AND sum(fcp_share_n) > 0, sum(fcp_share_sum) / sum(fcp_share_n), NULL) AS fcp_share,
           groupUniqArrayArray(10)(pages) AS pages,
           groupUniqArrayIf(page_host, page_host != '') AS page_hosts,
           arrayDistinct(arrayFlatten(groupArray(page_hosts) OVER ())) AS own_hosts
    FROM ${resource_window}
    WHERE resource != ''
    GROUP BY resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
