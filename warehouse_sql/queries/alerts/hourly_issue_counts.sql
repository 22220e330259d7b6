-- An `event_frequency` rule's preview: per hour since {since}, the events and distinct users of the project's
-- {max_issues} busiest issues. {filters}: the rule's ` AND …` conditions (environment, release, level, tag) from
-- stacklens/alerts/issue_measures.py's constant fragments, their values server-side parameters.
SELECT issue_id, toStartOfHour(timestamp) AS hour, count(), uniqExact(user_key)
FROM events
WHERE project_id = {project_id:UInt64} AND timestamp >= {since:DateTime64(3, 'UTC')} {filters}
  AND issue_id IN (SELECT issue_id FROM events
                   WHERE project_id = {project_id:UInt64} AND timestamp >= {since:DateTime64(3, 'UTC')} {filters}
                   GROUP BY issue_id ORDER BY count() DESC LIMIT {max_issues:UInt32})
GROUP BY issue_id, hour
