-- One transaction (page load, navigation or server request) of the project by event id.
SELECT toString(event_id) AS id, trace_id, timestamp, end_timestamp, op, transaction, page, url,
       toString(release) AS release, toString(environment) AS environment, toString(browser_name) AS browser,
       toString(os_name) AS os, duration_ms, measurements, http_status
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND event_id = {event_id:UUID}
LIMIT 1
SETTINGS ${view_settings}
