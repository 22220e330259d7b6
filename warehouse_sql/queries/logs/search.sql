-- One page of a logs search, newest first: the records after the cursor (`after_ts`, `after_key`: the last
-- record of the previous page; `has_cursor` 0 for the first page). Ties on the time are broken by the key,
-- so paging never skips or repeats a record. Ingest lands each record once (its dedup_key), so no FINAL.
SELECT
    timestamp,
    observed,
    severity,
    severity_number,
    severity_text,
    body,
    attributes,
    trace_id,
    span_id,
    service,
    release,
    environment,
    dedup_key
FROM logs
WHERE ${log_filter}
  AND ({has_cursor:UInt8} = 0 OR (timestamp, dedup_key) < ({after_ts:DateTime64(6, 'UTC')}, {after_key:String}))
ORDER BY timestamp DESC, dedup_key DESC
LIMIT {limit:UInt32}
