-- The page load of a trace, if one was sent (an error event's page links to its waterfall).
SELECT toString(event_id) AS event_id
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND trace_id = {trace_id:String}
  AND trace_id != '' AND op IN ('pageload', 'navigation')
  AND timestamp >= {around:DateTime64(3, 'UTC')} - INTERVAL 1 DAY AND timestamp < {around:DateTime64(3, 'UTC')} + INTERVAL 1 DAY
ORDER BY timestamp
LIMIT 1
SETTINGS ${view_settings}
