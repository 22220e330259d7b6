-- The first hours of the issues first seen in [since, until) (stacklens/anomalies/series.py): per hour, the events
-- of issues first seen in that same hour — a new issue's first hour is the new-issue rule's, never an anomaly.
-- The issues come from the issues mart (few), their events are found by the issue id's skip index.
SELECT toStartOfHour(timestamp) AS hour, count() AS new_issue_events
FROM events
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({issue_id:UInt64} = 0 OR issue_id = {issue_id:UInt64})
  AND (issue_id, toStartOfHour(timestamp)) IN (
      SELECT issue_id, toStartOfHour(min(first_seen))
      FROM issues FINAL
      WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
        AND first_seen >= {since:DateTime64(3, 'UTC')} AND first_seen < {until:DateTime64(3, 'UTC')}
      GROUP BY issue_id)
GROUP BY hour
