-- Raw release-health sessions (Sentry `session` and `sessions` items), as Relay reads them (docs/sdk.md).
-- One row per session update (`session` item: `session_id` set, `quantity` 1) or per bucket and status of a
-- session aggregate (`sessions` item: `session_id` all zeros, `quantity` the bucket's count of that status).
-- Partitioned, kept and sorted by `started`, which every update of a session repeats: a session's updates
-- live in one partition and expire together, so no reader ever sees a session without its first update.
-- ReplacingMergeTree collapses a re-landed row (same sort key); ingest drops known `dedup_key`s first.
CREATE TABLE IF NOT EXISTS sessions
(
    org_id            UInt64,
    project_id        UInt64,
    session_id        UUID,                    -- `sid`; all zeros for aggregate rows
    distinct_id       String,                  -- `did` (the user); '' when absent or the nil UUID
    status            LowCardinality(String),  -- ok | exited | errored | crashed | abnormal | unhandled
    errors            UInt32,                  -- errors seen in the session so far (aggregate rows: 0)
    init              UInt8,                   -- 1 when this update starts the session; aggregate rows: 1
    seq               UInt64,                  -- the SDK's logical clock; when absent, `timestamp` in ms
    quantity          UInt32,                  -- 1 for a session update; the bucket's count for an aggregate
    started           DateTime64(3, 'UTC'),
    timestamp         DateTime64(3, 'UTC'),    -- when the update was made; aggregate rows: `started`
    duration          Nullable(Float64),       -- seconds, when the SDK sent one
    release           LowCardinality(String),
    environment       LowCardinality(String),
    user_agent        String,
    source            LowCardinality(String),  -- 'session' | 'sessions': the item type the row came from
    received          DateTime64(3, 'UTC'),
    batch_id          String,
    -- What makes a row the same row when it is sent again (writer.drop_duplicates): a digest of the update
    -- as sent (session rows), or of the item, its line's time and position, the bucket and status (aggregates).
    dedup_key         String,
    INDEX idx_dedup_key dedup_key TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(received)
PARTITION BY toYYYYMM(started)
ORDER BY (project_id, release, environment, started, session_id, dedup_key)
TTL toDateTime(started) + INTERVAL ${retention_days} DAY
-- Keeps the last 10,000 insert blocks' hashes, so an insert retried with the same
-- insert_deduplication_token (per batch and table) lands once even without replication.
SETTINGS non_replicated_deduplication_window = 10000
