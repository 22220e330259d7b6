-- An anomaly rule's `events` and `users` series (stacklens/anomalies/series.py): per hour of [since, until), the
-- project's error events (what Explore's errors dataset counts), the distinct users they hit, and the events of
-- issues first seen in that same hour (a new issue's first hour is the new-issue rule's, never an anomaly).
-- {issue_id} 0 = every issue of the project; environment '' = any.
SELECT toStartOfHour(e.timestamp) AS hour, count() AS events, uniqExactIf(e.user_key, e.user_key != '') AS users,
       countIf(toStartOfHour(i.first) = toStartOfHour(e.timestamp)) AS new_issue_events
FROM events AS e
LEFT JOIN
(
    SELECT issue_id, min(first_seen) AS first
    FROM issues FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND first_seen >= {since:DateTime64(3, 'UTC')} AND first_seen < {until:DateTime64(3, 'UTC')}
    GROUP BY issue_id
) AS i ON i.issue_id = e.issue_id
WHERE e.org_id = {org_id:UInt64} AND e.project_id = {project_id:UInt64}
  AND e.timestamp >= {since:DateTime64(3, 'UTC')} AND e.timestamp < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR e.environment = {environment:String})
  AND ({issue_id:UInt64} = 0 OR e.issue_id = {issue_id:UInt64})
GROUP BY hour
ORDER BY hour
