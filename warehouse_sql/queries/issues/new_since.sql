-- The issues of one project first seen at or after {since}, oldest first (issue_live_counters: one row per issue,
-- fed at insert time): the candidates the ownership rules assign (stacklens.issues.auto_assign).
SELECT issue_id, min(first_seen) AS first
FROM issue_live_counters
WHERE project_id = {project_id:UInt64}
GROUP BY issue_id
HAVING first >= {since:DateTime64(3, 'UTC')} AND any(org_id) = {org_id:UInt64}
ORDER BY first, issue_id
LIMIT {limit:UInt32}
