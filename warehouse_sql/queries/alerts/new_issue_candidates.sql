-- The issues first seen since {since} in the projects of `new_issue` rules, with their latest title and release:
-- the candidates a rule group then filters (one row per issue in `issue_live_counters`).
SELECT project_id, issue_id, min(first_seen) AS first, ${issue_title}, argMaxMerge(last_release)
FROM issue_live_counters
WHERE project_id IN {project_ids:Array(UInt64)}
GROUP BY project_id, issue_id
HAVING first >= {since:DateTime64(3, 'UTC')}
