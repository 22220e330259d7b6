-- The first and the last UTC day on which the issues that lost or gained fingerprints have events (from the
-- insert-time daily states a regroup has just fed): the days whose daily counts a merge or a split rebuilds.
SELECT min(day) AS first_day, max(day) AS last_day, count() AS days
FROM issue_daily_states
WHERE project_id = {project_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
