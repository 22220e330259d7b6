-- The issues of one project that regressed in [{since}, {until}) (the `system` rows the issues asset writes to
-- issue_history), with the time of the latest regression: what the assignee and watchers are told of.
SELECT issue_id, max(at) AS latest
FROM issue_history
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND to_status = 'regressed'
  AND at >= {since:DateTime64(3, 'UTC')}
  AND at < {until:DateTime64(3, 'UTC')}
GROUP BY issue_id
ORDER BY latest, issue_id
