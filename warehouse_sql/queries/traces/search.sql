-- Traces of one project with at least one span matching the search (macro trace_span_match), newest match
-- first. Each source is read newest first along its sort key (project, time) and stops after {scan} matching
-- spans, so a search over millions of spans reads only the newest granules holding matches. The trace id is
-- read only for matching spans (a span without one is dropped after the scan, not in it: a condition on it
-- would read the id of every span of the window).
SELECT trace_id, max(timestamp) AS last_match, count() AS matching_spans
FROM (
    SELECT trace_id, timestamp
    FROM (
        SELECT trace_id, timestamp, toString(service) AS service, toString(op) AS op, transaction AS name,
               duration_ms, toString(status) AS status, http_status AS code, toString(release) AS release,
               toString(environment) AS environment
        FROM transactions
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
    )
    WHERE ${trace_span_match}
    ORDER BY timestamp DESC
    LIMIT {scan:UInt32}
    UNION ALL
    SELECT trace_id, timestamp
    FROM (
        SELECT trace_id, timestamp, toString(service) AS service, toString(op) AS op, description AS name,
               duration_ms, toString(status) AS status, status_code AS code, toString(release) AS release,
               toString(environment) AS environment
        FROM spans
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
    )
    WHERE ${trace_span_match}
    ORDER BY timestamp DESC
    LIMIT {scan:UInt32}
)
GROUP BY trace_id
HAVING trace_id != ''
ORDER BY last_match DESC, trace_id
LIMIT {limit:UInt32}
SETTINGS ${view_settings}
