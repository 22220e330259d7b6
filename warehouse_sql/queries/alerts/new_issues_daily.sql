-- A `new_issue` rule's preview: per UTC day since {since}, the project's issues first seen that day (from the
-- insert-time counters, `issue_live_counters`).
SELECT toDate(first) AS day, count()
FROM (SELECT issue_id, min(first_seen) AS first FROM issue_live_counters
      WHERE project_id = {project_id:UInt64} GROUP BY issue_id HAVING first >= {since:DateTime64(3, 'UTC')})
GROUP BY day
ORDER BY day
