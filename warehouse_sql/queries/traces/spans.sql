-- Every span of one trace in the organization, from every source and project (docs/traces.md): each
-- transaction (Sentry SDKs, and OTLP local roots) as its root span, its ids read from its trace context, and
-- the spans stored under it. The trace id skip indexes (migration 0230) keep the read to the granules that may
-- hold the id. Rows are not deduplicated here (a ReplacingMergeTree part not merged yet); the reader keeps
-- the first of each span id. The columns are stacklens.traces.tree.SpanRow's, in its order and types (read
-- as tuples, no conversion in Python): durations rounded to the microsecond as the API answers them.
SELECT JSONExtractString(payload, 'contexts', 'trace', 'span_id') AS span_id,
       JSONExtractString(payload, 'contexts', 'trace', 'parent_span_id') AS parent_span_id,
       project_id, toString(event_id) AS transaction_event_id, true AS is_transaction,
       toUnixTimestamp64Milli(timestamp) AS start_epoch_ms, round(toFloat64(duration_ms), 3) AS duration_ms,
       toString(op) AS op, transaction AS description, toString(status) AS status,
       toUInt32(http_status) AS status_code, toString(service) AS service, toString(release) AS release,
       toString(environment) AS environment, toString(platform) AS platform
FROM transactions
WHERE org_id = {org_id:UInt64} AND trace_id = {trace_id:String}
UNION ALL
SELECT span_id, parent_span_id, project_id, toString(transaction_event_id), false,
       toUnixTimestamp64Milli(timestamp), round(toFloat64(duration_ms), 3),
       toString(op), description, toString(status), toUInt32(status_code), toString(service),
       toString(release), toString(environment), ''
FROM spans
WHERE org_id = {org_id:UInt64} AND trace_id = {trace_id:String}
LIMIT {limit:UInt32}
SETTINGS ${view_settings}
