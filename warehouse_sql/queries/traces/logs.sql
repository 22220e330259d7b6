-- The log records of one trace in the organization (any project), oldest first, with the span each was
-- written in (the logs table's trace id skip index finds them).
SELECT timestamp, toString(severity) AS severity, body, span_id, toString(service) AS service, project_id
FROM logs
WHERE org_id = {org_id:UInt64} AND trace_id = {trace_id:String}
ORDER BY timestamp
LIMIT {limit:UInt32}
SETTINGS ${view_settings}
