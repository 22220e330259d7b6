-- Per release seen in [since, until) and filters (release '' left out): first page load, page loads, load
-- time (exact p75), JavaScript bytes per page load, API time of browser calls (exact p95) and its error share,
-- error events and issues first seen in it; ordered by first seen so each release compares with the one before it.
WITH
    tx AS
    (
        SELECT event_id, toString(release) AS release, timestamp AS ts, duration_ms
        FROM transactions
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND op = 'pageload' AND release != ''
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser_name = {browser:String})
    ),
    sp AS
    (
        SELECT toString(release) AS release,
               sumIf(coalesce(response_content_length, transfer_size, 0),
                     op = 'resource.script' OR (op LIKE 'resource.%' AND match(description, '\\.m?js(\\?|#|$)'))) AS js_bytes,
               countIf(op = 'http.client') AS api_calls,
               quantileExactInclusiveIf(0.95)(duration_ms, op = 'http.client') AS api_p95,
               countIf(op = 'http.client' AND status_code >= 400) AS api_errors
        FROM spans
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')} + INTERVAL 1 HOUR
          AND transaction_op = 'pageload' AND (op LIKE 'resource.%' OR op = 'http.client')
          AND transaction_event_id IN (SELECT event_id FROM tx)
        GROUP BY release
    ),
    ev AS
    (
        SELECT toString(release) AS release, count() AS error_events
        FROM events
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND release != '' AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
        GROUP BY release
    ),
    ni AS
    (
        -- Issues first seen in each release (the issues mart; environment and browser do not apply).
        SELECT first_release AS release, count() AS new_issues
        FROM issues FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release != ''
          AND ({release:String} = '' OR first_release = {release:String})
        GROUP BY first_release
    )
SELECT t.release AS release, t.first_seen AS first_seen, t.views AS views, t.load_p75 AS load_p75,
       sp.js_bytes / t.views AS js_bytes_per_view, sp.api_calls AS api_calls,
       if(sp.api_calls > 0, sp.api_p95, NULL) AS api_p95,
       if(sp.api_calls > 0, 100 * sp.api_errors / sp.api_calls, NULL) AS api_error_pct,
       ev.error_events AS error_events, ni.new_issues AS new_issues
FROM
(
    SELECT release, min(ts) AS first_seen, count() AS views, quantileExactInclusive(0.75)(duration_ms) AS load_p75
    FROM tx GROUP BY release
) AS t
LEFT JOIN sp ON sp.release = t.release
LEFT JOIN ev ON ev.release = t.release
LEFT JOIN ni ON ni.release = t.release
ORDER BY first_seen, release
LIMIT 200
SETTINGS join_use_nulls = 0
