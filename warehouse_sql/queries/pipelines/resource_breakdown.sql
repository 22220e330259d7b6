-- Rebuild `resource_breakdown` for the days in [{start}, {end}) by merging the hours' states
-- (resource_hour_states, refreshed first for the hours that received spans). p95 exact.
INSERT INTO resource_breakdown
SELECT
    org_id, project_id, page, day, resource_type, n_requests, n_views, n_bytes, n_bytes / n_requests,
    n_bytes / n_views, total_load_ms, total_load_ms / n_requests, p95[1],
    {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT max(org_id) AS org_id, project_id, page, toDate(hour) AS day, resource_type,
           sum(requests) AS n_requests, uniqExactMerge(views) AS n_views, toUInt64(sum(total_bytes)) AS n_bytes,
           sum(load_sum) AS total_load_ms, quantilesExactInclusiveMerge(0.95)(load_q) AS p95
    FROM resource_hour_states FINAL
    WHERE hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
    GROUP BY project_id, page, day, resource_type
)
