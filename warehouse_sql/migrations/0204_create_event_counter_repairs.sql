-- The landing attempts the `event_counters` asset handled: attempts of the ingest service that stopped after
-- storing rows and before their batch record, whose issues' counters it compared with the stored events and
-- corrected. An attempt found here is not handled again (a run re-reads the last 30 s behind its watermark),
-- and the table is the record of what a crash left short. Grain: one row per attempt and raw table. Kept 7
-- days: longer than the 2 days a run looks back.
CREATE TABLE IF NOT EXISTS event_counter_repairs
(
    source       LowCardinality(String),   -- events | transactions
    org_id       UInt64,
    batch_id     String,
    received_at  DateTime64(3, 'UTC'),     -- the attempt's receive time, on each of its rows
    rows         UInt64,                   -- rows it stored
    repaired_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(repaired_at)
ORDER BY (org_id, batch_id, received_at, source)
TTL toDateTime(received_at) + INTERVAL 7 DAY
