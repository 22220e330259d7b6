-- Source maps, minified files and upload chunks, content-addressed: one row per (organization, SHA-1 of the
-- content). The same file uploaded in ten releases is stored once. Chunks are kept per organization, so a
-- `missingChunks` answer never tells one organization what another has uploaded. Bodies compress well
-- (JSON and JavaScript: ZSTD takes a 5 MB map to about 1 MB).
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
