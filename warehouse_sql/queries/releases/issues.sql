-- The issue list's live title, status and counters of the issues `ids` (releases/issue_ids.sql: those new in a
-- release and those that regressed in it), as the issue list shows them.
SELECT issue_id, title, culprit, level, status, events, users_affected AS users, first_seen, last_seen
FROM issue_list(project_id = {project_id:UInt64})
WHERE org_id = {org_id:UInt64} AND issue_id IN {ids:Array(UInt64)}
