-- One trace across every source (docs/traces.md): the trace page and `GET /api/traces/{trace_id}` read every
-- span, transaction, error and replay of one trace id. The raw tables are sorted by project and time, so a
-- lookup by trace id alone would read them whole; these skip indexes let the engine read only the granules
-- (8,192 rows) that may hold the id. bloom_filter(0.001) per granule costs ~15 KB per 8,192 rows.
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE spans MATERIALIZE INDEX idx_trace_id;

ALTER TABLE transactions ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE transactions MATERIALIZE INDEX idx_trace_id;

-- An error event carries its trace in the payload's trace context (the SDKs set it on every event); as a
-- column it can be indexed. Computed when a row is written (parts written before compute it on read).
ALTER TABLE events
    ADD COLUMN IF NOT EXISTS trace_id String MATERIALIZED JSONExtractString(payload, 'contexts', 'trace', 'trace_id');
ALTER TABLE events ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE events MATERIALIZE INDEX idx_trace_id;

-- A replay lists the traces it saw (the SDK's trace_ids); has(trace_ids, id) uses this index.
ALTER TABLE replays ADD INDEX IF NOT EXISTS idx_trace_ids trace_ids TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE replays MATERIALIZE INDEX idx_trace_ids
