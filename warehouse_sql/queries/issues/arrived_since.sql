-- The issues of one project whose events arrived at or after {since} (issue_live_counters: one row per issue, fed
-- at insert time; last_received is when its newest event was stored), the earliest arrival first: the candidates
-- the ownership rules assign (stacklens.issues.auto_assign). By arrival, not by the events' own time: a backlog
-- a shipper sends an hour late, or a demo's history, is owned when it arrives (issue 71).
SELECT issue_id, min(first_seen) AS first, max(last_received) AS arrived
FROM issue_live_counters
WHERE project_id = {project_id:UInt64}
GROUP BY issue_id
HAVING arrived >= {since:DateTime64(3, 'UTC')} AND any(org_id) = {org_id:UInt64}
ORDER BY arrived, issue_id
LIMIT {limit:UInt32}
