-- Each resource (URL without query string; not fetch/XHR calls) of the spans in [since, until) and filters:
-- its type, requests, page loads, sizes, load time (avg, exact p95), render-blocking status counted per load
-- (blocking / non-blocking / unknown: browsers other than Chromium do not report it), cache hits, the mean share
-- of the page's FCP its blocking loads took, the pages that load it, and whether its host is another than the
-- pages' own (third party). The 500 heaviest by total bytes. Only the blocking loads meet their page load's FCP
-- (a join over a few rows); the rest is one pass over the spans.
WITH
    page_loads AS
    (
        SELECT event_id, measurements['fcp'] AS fcp, domain(url) AS host
        FROM transactions
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op IN ('pageload', 'navigation')
          AND ({browser:String} = '' OR browser_name = {browser:String})
    ),
    own_hosts AS (SELECT DISTINCT host FROM page_loads WHERE host != ''),
    resource_spans AS
    (
        SELECT transaction_event_id, duration_ms, transfer_size, render_blocking_status, page,
               cutQueryStringAndFragment(description) AS resource, domain(description) AS host,
               coalesce(response_content_length, transfer_size, 0) AS enc,
               coalesce(decoded_content_length, response_content_length, transfer_size, 0) AS dec,
               multiIf(
                   op = 'resource.script' OR match(description, '\\.m?js(\\?|#|$)'), 'JavaScript',
                   op = 'resource.css' OR match(description, '\\.css(\\?|#|$)'), 'CSS',
                   op = 'resource.img' OR match(description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
                   op = 'resource.font' OR match(description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
                   'Other') AS resource_type
        FROM spans
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op LIKE 'resource.%' AND op NOT IN ('resource.fetch', 'resource.xmlhttprequest')
          AND transaction_op IN ('pageload', 'navigation')
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR transaction_event_id IN (SELECT event_id FROM page_loads))
    ),
    fcp_shares AS
    (
        SELECT b.resource AS resource, avg(b.duration_ms / p.fcp) AS fcp_share
        FROM (SELECT transaction_event_id, resource, duration_ms FROM resource_spans
              WHERE render_blocking_status = 'blocking') AS b
        INNER JOIN page_loads AS p ON p.event_id = b.transaction_event_id
        WHERE p.fcp > 0
        GROUP BY b.resource
    )
SELECT r.resource AS resource, r.resource_type AS resource_type, r.host AS host,
       r.host != '' AND r.host NOT IN (SELECT host FROM own_hosts) AS third_party,
       r.requests AS requests, r.loads AS loads, r.total_bytes AS total_bytes, r.avg_bytes AS avg_bytes,
       r.max_bytes AS max_bytes, r.avg_decoded_bytes AS avg_decoded_bytes, r.avg_transfer_bytes AS avg_transfer_bytes,
       r.avg_ms AS avg_ms, r.p95_ms AS p95_ms, r.blocking AS blocking, r.non_blocking AS non_blocking,
       r.unknown AS unknown, r.cache_hits AS cache_hits, r.transfer_n AS transfer_n,
       if(r.blocking > 0, f.fcp_share, NULL) AS fcp_share, r.pages AS pages
FROM
(
    SELECT resource, any(resource_type) AS resource_type, any(host) AS host,
           count() AS requests, uniqExact(transaction_event_id) AS loads,
           sum(enc) AS total_bytes, avg(enc) AS avg_bytes, max(enc) AS max_bytes, avg(dec) AS avg_decoded_bytes,
           avgIf(transfer_size, transfer_size IS NOT NULL) AS avg_transfer_bytes,
           avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
           countIf(render_blocking_status = 'blocking') AS blocking,
           countIf(render_blocking_status = 'non-blocking') AS non_blocking,
           countIf(render_blocking_status NOT IN ('blocking', 'non-blocking')) AS unknown,
           countIf(transfer_size = 0 AND dec > 0) AS cache_hits, countIf(transfer_size IS NOT NULL) AS transfer_n,
           groupUniqArray(10)(page) AS pages
    FROM resource_spans
    GROUP BY resource
    ORDER BY total_bytes DESC, resource
    LIMIT 500
) AS r
LEFT JOIN fcp_shares AS f ON f.resource = r.resource
ORDER BY total_bytes DESC, resource
SETTINGS join_use_nulls = 1
