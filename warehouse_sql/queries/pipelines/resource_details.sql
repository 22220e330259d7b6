-- Rebuild `resource_details` for the days in [{start}, {end}) by merging the hours' states
-- (resource_detail_hour_states). p95 exact.
-- Render-blocking impact: High when the resource takes >= 500 ms on average or weighs >= 100 KB;
-- Medium when >= 200 ms or >= 30 KB; else Low.
INSERT INTO resource_details
SELECT
    org_id, project_id, page, day, resource, r_type, n_requests, avg_bytes, max_bytes, avg_decoded,
    avg_load, p95[1], any_blocking,
    if(any_blocking = 0, '',
       multiIf(avg_load >= 500 OR avg_bytes >= 102400, 'High', avg_load >= 200 OR avg_bytes >= 30720, 'Medium', 'Low')),
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT max(org_id) AS org_id, project_id, page, toDate(hour) AS day, resource,
           any(resource_type) AS r_type, sum(requests) AS n_requests,
           sum(size_sum) / sum(requests) AS avg_bytes, toUInt64(max(size_max)) AS max_bytes,
           sum(decoded_sum) / sum(requests) AS avg_decoded, sum(load_sum) / sum(requests) AS avg_load,
           quantilesExactInclusiveMerge(0.95)(load_q) AS p95, max(blocking) AS any_blocking
    FROM resource_detail_hour_states FINAL
    WHERE hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
    GROUP BY project_id, page, day, resource
)
