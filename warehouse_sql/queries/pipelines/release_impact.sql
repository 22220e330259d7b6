-- Rebuild `release_impact` for every project with data received after {since}: per release (ordered by first
-- seen) load time p75, JavaScript bytes per view, API p95, error events and new issues, against the release
-- before it. Transactions and spans come from the hourly states kept by the performance assets
-- (page_hour_states, resource_hour_states, endpoint_hour_states; the caller reads only what they already
-- hold), errors from insert-time aggregates: no raw row is read. Percentiles exact.
-- Only the releases with states in the hours that received rows since {since} are merged again (an exact
-- percentile merges every value of the release); the others keep the figures the mart holds, and every
-- release's errors, new issues and changes against its predecessor are recomputed.
INSERT INTO release_impact
WITH
    projects AS
    (
        SELECT DISTINCT project_id FROM raw_arrival_hours WHERE received > {since:DateTime64(3, 'UTC')}
    ),
    dirty AS
    (
        SELECT DISTINCT project_id, hour FROM raw_arrival_hours
        WHERE received > {since:DateTime64(3, 'UTC')} AND source IN ('transactions', 'spans')
    ),
    touched AS
    (
        SELECT DISTINCT project_id, release FROM
        (
            SELECT project_id, release FROM page_hour_states WHERE (project_id, hour) IN dirty
            UNION ALL
            SELECT project_id, release FROM resource_hour_states WHERE (project_id, hour) IN dirty
            UNION ALL
            SELECT project_id, release FROM endpoint_hour_states WHERE (project_id, hour) IN dirty
        )
        WHERE release != ''
    ),
    kept AS
    (
        SELECT project_id, release, org_id, first_seen, views, load_p75_ms, js_bytes_per_view, api_p95_ms
        FROM release_impact FINAL
        WHERE project_id IN projects AND (project_id, release) NOT IN touched
    ),
    tx AS
    (
        SELECT max(org_id) AS org_id, project_id, release, min(first_seen) AS first_seen,
               sum(pageloads) AS views,
               if(sum(load_n) = 0, NULL, quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(load_q)[2]) AS load_p75
        FROM page_hour_states FINAL WHERE (project_id, release) IN touched
        GROUP BY project_id, release
    ),
    sp AS
    (
        SELECT assumeNotNull(coalesce(r.project_id, a.project_id)) AS project_id,
               assumeNotNull(coalesce(r.release, a.release)) AS release, r.js_bytes AS js_bytes,
               a.client_p95 AS client_p95, a.server_p95 AS server_p95
        FROM
        (
            SELECT project_id, release, sumIf(total_bytes, resource_type = 'JavaScript') AS js_bytes
            FROM resource_hour_states FINAL WHERE (project_id, release) IN touched
            GROUP BY project_id, release
        ) AS r
        FULL OUTER JOIN
        (
            SELECT project_id, release,
                   if(sumIf(calls, source = 'client') = 0, NULL,
                      quantilesExactInclusiveMergeIf(0.5, 0.95)(duration_q, source = 'client')[2]) AS client_p95,
                   if(sumIf(calls, source = 'server') = 0, NULL,
                      quantilesExactInclusiveMergeIf(0.5, 0.95)(duration_q, source = 'server')[2]) AS server_p95
            FROM endpoint_hour_states FINAL WHERE (project_id, release) IN touched
            GROUP BY project_id, release
        ) AS a ON a.project_id = r.project_id AND a.release = r.release
        SETTINGS join_use_nulls = 1
    ),
    ev AS
    (
        -- error events per release (stored events, as the live issue counters count them)
        SELECT any(org_id) AS org_id, project_id, release, min(first_seen) AS first_seen, sum(events) AS error_events
        FROM release_error_counts WHERE project_id IN projects
        GROUP BY project_id, release
    ),
    firsts AS
    (
        -- new issues: issues whose earliest event with a release is in the release (insert-time rollup)
        SELECT project_id, first_release AS release, count() AS new_issues FROM
        (
            SELECT project_id, issue_id, min(first_release).2 AS first_release
            FROM issue_rollup WHERE project_id IN projects GROUP BY project_id, issue_id
        )
        WHERE first_release != '' GROUP BY project_id, release
    ),
    releases AS
    (
        SELECT r.project_id AS project_id, r.release AS release, max(r.org_id) AS org_id, min(r.first_seen) AS first_seen
        FROM
        (
            SELECT org_id, project_id, release, first_seen FROM tx
            UNION ALL SELECT org_id, project_id, release, first_seen FROM kept
            UNION ALL SELECT org_id, project_id, release, first_seen FROM ev
        ) AS r
        GROUP BY project_id, release
    ),
    joined AS
    (
        SELECT r.org_id AS org_id, r.project_id AS project_id, r.release AS release, r.first_seen AS first_seen,
               if(k.hit, k.views, t.views) AS views, if(k.hit, k.load_p75_ms, t.load_p75) AS load_p75,
               if(k.hit, k.js_bytes_per_view, if(t.views = 0, NULL, s.js_bytes / t.views)) AS js_per_view,
               if(k.hit, k.api_p95_ms, coalesce(s.client_p95, s.server_p95)) AS api_p95,
               e.error_events AS error_events, f.new_issues AS new_issues
        FROM releases AS r
        LEFT JOIN tx AS t ON t.project_id = r.project_id AND t.release = r.release
        LEFT JOIN sp AS s ON s.project_id = r.project_id AND s.release = r.release
        LEFT JOIN (SELECT *, true AS hit FROM kept) AS k ON k.project_id = r.project_id AND k.release = r.release
        LEFT JOIN ev AS e ON e.project_id = r.project_id AND e.release = r.release
        LEFT JOIN firsts AS f ON f.project_id = r.project_id AND f.release = r.release
        SETTINGS join_use_nulls = 1
    ),
    ordered AS
    (
        SELECT *,
            lagInFrame(release, 1, '') OVER w AS prev_release,
            lagInFrame(toNullable(load_p75), 1, NULL) OVER w AS prev_load,
            lagInFrame(toNullable(js_per_view), 1, NULL) OVER w AS prev_js,
            lagInFrame(toNullable(api_p95), 1, NULL) OVER w AS prev_api,
            lagInFrame(toNullable(coalesce(error_events, 0)), 1, NULL) OVER w AS prev_errors,
            lagInFrame(toNullable(coalesce(new_issues, 0)), 1, NULL) OVER w AS prev_new
        FROM joined
        WINDOW w AS (PARTITION BY project_id ORDER BY first_seen, release ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    )
SELECT org_id, project_id, release, first_seen, prev_release, coalesce(views, 0),
       load_p75, if(prev_load > 0, 100 * (load_p75 - prev_load) / prev_load, NULL),
       js_per_view, if(prev_js > 0, 100 * (js_per_view - prev_js) / prev_js, NULL),
       api_p95, if(prev_api > 0, 100 * (api_p95 - prev_api) / prev_api, NULL),
       coalesce(error_events, 0),
       if(prev_errors > 0, 100 * (coalesce(error_events, 0) - prev_errors) / prev_errors, NULL),
       coalesce(new_issues, 0),
       if(prev_new > 0, 100 * (coalesce(new_issues, 0) - prev_new) / prev_new, NULL),
       {materialized_at:DateTime64(6, 'UTC')}
FROM ordered
