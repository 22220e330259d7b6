-- Events of one issue per time bucket over a window [since, until) (the detail page's chart; the window's edges as
-- every figure cuts them, stacklens/metrics/windows.py). Filtering by the issue's
-- fingerprint hits the events sort key (project_id, fingerprint, timestamp).
SELECT toStartOfInterval(timestamp, toIntervalSecond({bucket_seconds:UInt32})) AS bucket,
       uniqExact(event_id) AS events
FROM events
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND fingerprint IN {fingerprints:Array(String)}
  AND issue_id = {issue_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND timestamp < {until:DateTime64(3, 'UTC')}
GROUP BY bucket
ORDER BY bucket
