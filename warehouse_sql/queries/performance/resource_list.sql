-- Each resource (URL without query string; not fetch/XHR calls) of the spans in [since, until) and filters:
-- its type, requests, page loads, sizes, load time (avg, exact p95), render-blocking status counted per load
-- (blocking / non-blocking / unknown: browsers other than Chromium do not report it), cache hits, the mean share
-- of the page's FCP its load took (blocking loads with an FCP), the pages that load it, and whether its host is
-- another than the pages' own (third party). The 500 heaviest by total bytes.
WITH
    page_loads AS
    (
        SELECT event_id, measurements['fcp'] AS fcp, browser_name, domain(url) AS host
        FROM transactions
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op IN ('pageload', 'navigation')
    ),
    own_hosts AS (SELECT DISTINCT host FROM page_loads WHERE host != '')
SELECT resource, any(resource_type) AS resource_type, any(host) AS host,
       host != '' AND host NOT IN (SELECT host FROM own_hosts) AS third_party,
       count() AS requests, uniqExact(transaction_event_id) AS loads,
       sum(enc) AS total_bytes, avg(enc) AS avg_bytes, max(enc) AS max_bytes, avg(dec) AS avg_decoded_bytes,
       avgIf(transfer_size, transfer_size IS NOT NULL) AS avg_transfer_bytes,
       avg(duration_ms) AS avg_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_ms,
       countIf(render_blocking_status = 'blocking') AS blocking,
       countIf(render_blocking_status = 'non-blocking') AS non_blocking,
       countIf(render_blocking_status NOT IN ('blocking', 'non-blocking')) AS unknown,
       countIf(transfer_size = 0 AND dec > 0) AS cache_hits, countIf(transfer_size IS NOT NULL) AS transfer_n,
       avgIf(duration_ms / fcp, render_blocking_status = 'blocking' AND fcp > 0) AS fcp_share,
       groupUniqArray(10)(page) AS pages
FROM
(
    SELECT s.transaction_event_id AS transaction_event_id, s.duration_ms AS duration_ms,
           s.transfer_size AS transfer_size, s.render_blocking_status AS render_blocking_status, s.page AS page,
           cutQueryStringAndFragment(s.description) AS resource, domain(s.description) AS host,
           coalesce(s.response_content_length, s.transfer_size, 0) AS enc,
           coalesce(s.decoded_content_length, s.response_content_length, s.transfer_size, 0) AS dec,
           p.fcp AS fcp,
           multiIf(
               s.op = 'resource.script' OR match(s.description, '\\.m?js(\\?|#|$)'), 'JavaScript',
               s.op = 'resource.css' OR match(s.description, '\\.css(\\?|#|$)'), 'CSS',
               s.op = 'resource.img' OR match(s.description, '\\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\\?|#|$)'), 'Images',
               s.op = 'resource.font' OR match(s.description, '\\.(woff2?|ttf|otf|eot)(\\?|#|$)'), 'Fonts',
               'Other') AS resource_type
    FROM spans AS s
    LEFT JOIN page_loads AS p ON p.event_id = s.transaction_event_id
    WHERE s.project_id = {project_id:UInt64} AND s.org_id = {org_id:UInt64}
      AND s.timestamp >= {since:DateTime64(3, 'UTC')} AND s.timestamp < {until:DateTime64(3, 'UTC')}
      AND s.op LIKE 'resource.%' AND s.op NOT IN ('resource.fetch', 'resource.xmlhttprequest')
      AND s.transaction_op IN ('pageload', 'navigation')
      AND ({environment:String} = '' OR s.environment = {environment:String})
      AND ({release:String} = '' OR s.release = {release:String})
      AND ({browser:String} = '' OR p.browser_name = {browser:String})
    SETTINGS join_use_nulls = 0
)
GROUP BY resource
ORDER BY total_bytes DESC, resource
LIMIT 500
