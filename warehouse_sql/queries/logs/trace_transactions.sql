-- The transaction each trace of a page of log records opens (its waterfall): per trace, its earliest
-- transaction in the window (widened by a day either side), if one was sent. One read for the whole page.
SELECT trace_id, argMin(toString(event_id), timestamp) AS event_id
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND trace_id IN {trace_ids:Array(String)}
  AND timestamp >= {since:DateTime64(6, 'UTC')} - INTERVAL 1 DAY
  AND timestamp < {until:DateTime64(6, 'UTC')} + INTERVAL 1 DAY
GROUP BY trace_id
