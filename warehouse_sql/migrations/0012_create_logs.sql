-- Raw log records: OpenTelemetry log records (OTLP/HTTP) and Sentry SDK logs (`log` envelope items), one row
-- per record, read by the logs view, its API and Explore (docs/logs.md).
-- `severity` is the level word the number falls in (trace, debug, info, warn, error, fatal: OTLP's ranges);
-- `severity_text` is the text as sent ("WARNING", "warn", …). Attribute values are text (numbers and booleans
-- as written, lists and maps as JSON): what a search compares and a table shows.
-- Kept for STACKLENS_LOG_RETENTION_DAYS, apart from events. Sorted by project and time: a search reads one
-- project's newest records first. ReplacingMergeTree collapses a re-landed row (same sort key); ingest drops
-- known `dedup_key`s first (stacklens.ingest.logs).
CREATE TABLE IF NOT EXISTS logs
(
    org_id            UInt64,
    project_id        UInt64,
    timestamp         DateTime64(6, 'UTC'),    -- when the record happened (normalised like events' times)
    observed          DateTime64(6, 'UTC'),    -- when a collector or SDK saw it; the timestamp when not sent
    severity          LowCardinality(String),  -- trace | debug | info | warn | error | fatal | '' (unknown)
    severity_number   UInt8,                   -- 1–24 (OTLP); 0 unspecified
    severity_text     LowCardinality(String),
    body              String,
    attributes        Map(String, String),
    trace_id          String,                  -- 32 hex digits, or ''
    span_id           String,                  -- 16 hex digits, or ''
    service           LowCardinality(String),
    release           LowCardinality(String),
    environment       LowCardinality(String),
    source            LowCardinality(String),  -- 'otlp' | 'sentry'
    received          DateTime64(3, 'UTC'),
    batch_id          String,
    -- What makes a record the same record when it is sent again: a digest of the project and the record as
    -- sent (writer.drop_duplicates).
    dedup_key         String,
    INDEX idx_dedup_key dedup_key TYPE bloom_filter(0.001) GRANULARITY 4,
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(received)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, dedup_key)
TTL toDateTime(timestamp) + INTERVAL ${log_retention_days} DAY
-- Keeps the last 10,000 insert blocks' hashes, so an insert retried with the same
-- insert_deduplication_token (per batch and table) lands once even without replication.
SETTINGS non_replicated_deduplication_window = 10000
