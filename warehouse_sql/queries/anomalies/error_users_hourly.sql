-- An anomaly rule's `users` series (stacklens/anomalies/series.py): per hour of [since, until), the project's (or
-- one issue's) error events and the distinct users they hit (a user key; events without one hit nobody counted).
-- {issue_id} 0 = every issue; environment '' = any.
SELECT toStartOfHour(timestamp) AS hour, count() AS events, uniqExactIf(user_key, user_key != '') AS users
FROM events
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({issue_id:UInt64} = 0 OR issue_id = {issue_id:UInt64})
GROUP BY hour
ORDER BY hour
