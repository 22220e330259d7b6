-- Raw transactions: page loads, navigations and API requests (Sentry `transaction` items).
CREATE TABLE IF NOT EXISTS transactions
(
    org_id            UInt64,
    project_id        UInt64,
    event_id          UUID,
    trace_id          String,
    timestamp         DateTime64(3, 'UTC'),   -- start
    end_timestamp     DateTime64(3, 'UTC'),
    received_at       DateTime64(3, 'UTC'),
    batch_id          String,
    platform          LowCardinality(String),
    release           LowCardinality(String),
    environment       LowCardinality(String),
    service           LowCardinality(String),
    server_name       LowCardinality(String),
    transaction       String,
    op                LowCardinality(String),   -- pageload | navigation | http.server | ...
    status            LowCardinality(String),
    duration_ms       Float64,
    page              String,                   -- normalised route (ids and UUIDs folded)
    url               String,
    http_method       LowCardinality(String),
    http_status       UInt16,
    measurements      Map(LowCardinality(String), Float64),  -- ttfb, fcp, lcp, cls, inp, ... (ms; cls unitless)
    browser_name      LowCardinality(String),
    os_name           LowCardinality(String),
    user_key          String,
    tags              Map(LowCardinality(String), String),
    payload           String CODEC(ZSTD(3)),
    INDEX idx_event_id event_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
-- Keeps the last 10,000 insert blocks' hashes, so an insert retried with the same
-- insert_deduplication_token (per batch and table) lands once even without replication.
SETTINGS non_replicated_deduplication_window = 10000
