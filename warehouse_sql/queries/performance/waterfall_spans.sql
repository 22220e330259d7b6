-- The spans of one transaction (at most 2000, as ingest keeps), in start order; the span's status and transfer
-- size say why a row has no HTTP status (stacklens/performance/waterfall.py, status_of).
SELECT span_id, parent_span_id, timestamp, duration_ms, op, description, status_code,
       toString(status) AS span_status, transfer_size,
       toString(render_blocking_status) AS render_blocking_status,
       coalesce(response_content_length, transfer_size) AS bytes, decoded_content_length AS decoded_bytes
FROM spans
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND transaction_event_id = {event_id:UUID}
  AND timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {start:DateTime64(3, 'UTC')} + INTERVAL 1 DAY
ORDER BY timestamp, span_id
LIMIT 2000
SETTINGS ${view_settings}
