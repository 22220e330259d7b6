-- Raw error events: one row per Sentry `event` item, scrubbed and normalised at ingest.
-- The original (scrubbed) payload is kept with ZSTD so a new grouping or mart can be rebuilt from raw.
-- ReplacingMergeTree collapses a re-landed event (same sort key); readers count uniqExact(event_id) anyway.
CREATE TABLE IF NOT EXISTS events
(
    org_id            UInt64,
    project_id        UInt64,
    event_id          UUID,
    issue_id          UInt64,          -- int(sha256("<project_id>:<fingerprint>")[:13], 16): 52 bits, JS-safe
    fingerprint       String,          -- hex digest of the grouping components
    grouping_version  LowCardinality(String),
    timestamp         DateTime64(3, 'UTC'),
    received_at       DateTime64(3, 'UTC'),
    batch_id          String,
    platform          LowCardinality(String),
    level             LowCardinality(String),
    logger            String,
    release           LowCardinality(String),
    environment       LowCardinality(String),
    service           LowCardinality(String),
    server_name       LowCardinality(String),
    transaction       String,
    title             String,
    culprit           String,
    message           String,
    exception_type    String,          -- the exception that was raised (last of the chain)
    exception_value   String,
    exception_types   Array(String),   -- the whole chain, in payload order (causes first)
    exception_values  Array(String),
    handled           UInt8,
    in_app_frames     Array(String),   -- "<module or file basename>:<function>" of in-app frames, crash site first
    frame_count       UInt16,
    request_method    LowCardinality(String),
    request_url       String,
    user_id           String,
    user_email        String,
    user_name         String,
    user_ip           String,
    user_key          String,          -- first of id / email / username / ip: who "users affected" counts
    tags              Map(LowCardinality(String), String),
    browser_name      LowCardinality(String),
    browser_version   String,
    os_name           LowCardinality(String),
    os_version        String,
    runtime_name      LowCardinality(String),
    runtime_version   String,
    sdk_name          LowCardinality(String),
    sdk_version       String,
    payload           String CODEC(ZSTD(3)),
    INDEX idx_event_id event_id TYPE bloom_filter(0.001) GRANULARITY 4,
    INDEX idx_issue_id issue_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, fingerprint, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
-- Keeps the last 10,000 insert blocks' hashes, so an insert retried with the same
-- insert_deduplication_token (per batch and table) lands once even without replication.
SETTINGS non_replicated_deduplication_window = 10000
