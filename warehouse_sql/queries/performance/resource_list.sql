-- Each resource (URL without query string; not fetch/XHR calls) of the requests in [since, until) and filters
-- (`resource_facts`): its type, requests, page loads, sizes, load time (avg, exact p95), render-blocking status
-- counted per load (blocking / non-blocking / unknown: browsers other than Chromium do not report it), cache hits,
-- the mean share of the page's FCP its blocking loads took, the pages that load it, and whether its host is another
-- than the pages' own (third party). The 500 heaviest by total bytes.
WITH
    resource_spans AS (SELECT * FROM resource_facts FINAL WHERE ${pageload_filter} AND is_request = 0),
    own_hosts AS (SELECT DISTINCT page_host FROM resource_spans WHERE page_host != '')
SELECT resource, resource_type, host, host != '' AND host NOT IN (SELECT page_host FROM own_hosts) AS third_party,
       requests, loads, total_bytes, avg_bytes, max_bytes, avg_decoded_bytes, avg_transfer_bytes, avg_ms, p95_ms,
       blocking, non_blocking, unknown, cache_hits, transfer_n, fcp_share, pages
FROM
(
    SELECT resource, any(resource_type) AS resource_type, any(resource_spans.host) AS host,
           count() AS requests, uniqExact(load_id) AS loads,
           sum(enc) AS total_bytes, avg(enc) AS avg_bytes, max(enc) AS max_bytes, avg(dec) AS avg_decoded_bytes,
           avg(transfer_size) AS avg_transfer_bytes,
           avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
           countIf(blocking_status = 'blocking') AS blocking,
           countIf(blocking_status = 'non-blocking') AS non_blocking,
           countIf(blocking_status NOT IN ('blocking', 'non-blocking')) AS unknown,
           countIf(transfer_size = 0 AND dec > 0) AS cache_hits, count(transfer_size) AS transfer_n,
           if(blocking > 0, avgIf(duration_ms / fcp, blocking_status = 'blocking' AND fcp > 0), NULL) AS fcp_share,
           groupUniqArray(10)(page) AS pages
    FROM resource_spans
    GROUP BY resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
)
ORDER BY total_bytes DESC, resource
