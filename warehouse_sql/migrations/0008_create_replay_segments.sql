-- Session replay recordings (docs/architecture.md §2): one row per segment, keyed by (project, replay id, segment id).
-- The rrweb events stay compressed as the SDK sent them (zlib or gzip; a plain-JSON segment is zlib-compressed
-- once at ingest), so a 5-minute session costs a few hundred KB.
-- ReplacingMergeTree collapses a segment landed twice (same sort key); ingest drops known segments first.
CREATE TABLE IF NOT EXISTS replay_segments
(
    org_id            UInt64,
    project_id        UInt64,
    replay_id         UUID,
    segment_id        UInt32,
    timestamp         DateTime64(3, 'UTC'),   -- the first rrweb event of the segment
    end_timestamp     DateTime64(3, 'UTC'),   -- its last event
    received_at       DateTime64(3, 'UTC'),
    batch_id          String,
    encoding          LowCardinality(String), -- 'zlib' or 'gzip': how `payload` is compressed
    event_count       UInt32,
    has_full_snapshot UInt8,                  -- a player can start from this segment (rrweb type 2)
    size_bytes        UInt32,                 -- the stored payload's size
    marks             String CODEC(ZSTD(3)),  -- [[epoch ms, kind, label]]: clicks, navigations, breadcrumbs
    -- base64 of the stored bytes (inserts are JSONEachRow text); ZSTD wins back most of base64's third
    payload           String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, replay_id, segment_id)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
SETTINGS non_replicated_deduplication_window = 10000
