-- The latest title of each issue an alert names, from the insert-time counters (`issue_live_counters`).
SELECT issue_id, ${issue_title}
FROM issue_live_counters
WHERE project_id IN {project_ids:Array(UInt64)} AND issue_id IN {issue_ids:Array(UInt64)}
GROUP BY issue_id
