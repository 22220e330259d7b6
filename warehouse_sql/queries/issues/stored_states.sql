-- The stored workflow state (`issue_state`) of some issues of one project; an issue without a row is unresolved.
SELECT org_id, project_id, issue_id, status, ignore_until_events, ignore_events_baseline, ignore_until,
       resolved_release, changed_at, changed_by
FROM issue_state FINAL
WHERE project_id = {project_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
