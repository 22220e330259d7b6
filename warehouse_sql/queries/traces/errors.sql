-- The error events of one trace in the organization (any project), oldest first, each with the span it was
-- captured in (its trace context's span id) so the trace page can show it in place.
SELECT toString(event_id) AS event_id, project_id, issue_id, title, timestamp, toString(level) AS level,
       JSONExtractString(payload, 'contexts', 'trace', 'span_id') AS span_id
FROM events
WHERE org_id = {org_id:UInt64} AND trace_id = {trace_id:String}
ORDER BY timestamp, event_id
LIMIT 1 BY event_id
LIMIT {limit:UInt32}
SETTINGS ${view_settings}
