-- Source maps, minified files and upload chunks, content-addressed: one row per (organization, SHA-1 of the
-- content). The same file uploaded in ten releases is stored once. Chunks are kept per organization, so a
-- `missingChunks` answer never tells one organization what another has uploaded. Bodies compress well
-- (JSON and JavaScript: ZSTD takes a 5 MB map to about 1 MB). Chunks are only needed until their bundle is
-- assembled (seconds later): they expire after a day; files stay until their bundle is deleted.
CREATE TABLE IF NOT EXISTS sourcemap_blobs
(
    org_id      UInt64,
    sha1        String,
    kind        LowCardinality(String),
    size        UInt64,
    body        String CODEC(ZSTD(3)),
    created_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(created_at)
ORDER BY (org_id, kind, sha1)
TTL toDateTime(created_at) + INTERVAL 1 DAY DELETE WHERE kind = 'chunk'
