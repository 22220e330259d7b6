-- Correction rows for issue_totals_daily: for each (issue, day) in {keys}, the events stored but not counted
-- ({missing}, same position) with the users' state and first / last seen of all the day's stored events.
INSERT INTO issue_totals_daily (org_id, project_id, day, issue_id, events, users, first_seen, last_seen)
SELECT
    any(org_id),
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    arrayElement({missing:Array(UInt64)}, indexOf({keys:Array(Tuple(UInt64, UInt64, Date))}, (project_id, issue_id, day))),
    uniqState(nullIf(user_key, '')),
    min(timestamp),
    max(timestamp)
FROM events
WHERE project_id IN {projects:Array(UInt64)} AND issue_id IN {issues:Array(UInt64)}
  AND (project_id, issue_id, toDate(timestamp)) IN {keys:Array(Tuple(UInt64, UInt64, Date))}
GROUP BY project_id, issue_id, day
