-- One row per landed batch, keyed by the shipper's Idempotency-Key: a resent batch answers from here.
CREATE TABLE IF NOT EXISTS ingest_batches
(
    org_id        UInt64,
    batch_id      String,
    received_at   DateTime64(3, 'UTC'),
    lines         UInt32,
    accepted      UInt32,
    duplicates    UInt32,
    skipped       UInt32,          -- lines of item types the service does not store yet (counted, kept by the shipper)
    rejected      String           -- JSON array of {"line", "error"}
)
ENGINE = ReplacingMergeTree(received_at)
ORDER BY (org_id, batch_id)
TTL toDateTime(received_at) + INTERVAL 30 DAY
