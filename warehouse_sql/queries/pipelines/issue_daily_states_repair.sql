-- Correction rows for issue_daily_states: for each (issue, day) in {keys}, the events stored but not counted
-- ({missing}, same position) and the users' state of all the day's stored events (a state merged again
-- changes nothing).
INSERT INTO issue_daily_states (org_id, project_id, issue_id, day, events, users)
SELECT
    any(org_id),
    project_id,
    issue_id,
    toDate(timestamp) AS day,
    arrayElement({missing:Array(UInt64)}, indexOf({keys:Array(Tuple(UInt64, UInt64, Date))}, (project_id, issue_id, day))),
    uniqExactStateIf(user_key, user_key != '')
FROM events
WHERE project_id IN {projects:Array(UInt64)} AND issue_id IN {issues:Array(UInt64)}
  AND (project_id, issue_id, toDate(timestamp)) IN {keys:Array(Tuple(UInt64, UInt64, Date))}
GROUP BY project_id, issue_id, day
