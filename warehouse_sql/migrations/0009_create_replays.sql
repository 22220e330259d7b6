-- Session replay events: the SDK's `replay_event` item, one per segment, describing the session so far
-- (urls visited, error ids, trace ids, user, browser). The replay list aggregates them per replay id.
CREATE TABLE IF NOT EXISTS replays
(
    org_id            UInt64,
    project_id        UInt64,
    replay_id         UUID,
    segment_id        UInt32,
    timestamp         DateTime64(3, 'UTC'),
    replay_start      DateTime64(3, 'UTC'),
    received_at       DateTime64(3, 'UTC'),
    batch_id          String,
    replay_type       LowCardinality(String),   -- 'session' or 'buffer' (recorded before an error)
    environment       LowCardinality(String),
    release           LowCardinality(String),
    urls              Array(String),
    error_ids         Array(String),
    trace_ids         Array(String),
    user_id           String,
    user_email        String,
    user_name         String,
    user_ip           String,
    browser_name      LowCardinality(String),
    browser_version   String,
    os_name           LowCardinality(String),
    device_family     LowCardinality(String),
    sdk_name          LowCardinality(String),
    sdk_version       String,
    payload           String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, replay_id, segment_id)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
SETTINGS non_replicated_deduplication_window = 10000
