-- The manifest of every uploaded bundle: one row per file with the release, dist, URL (`~/app.min.js`),
-- debug id and the SHA-1 of its content in `sourcemap_blobs`. Matching reads this table only (it is small:
-- a row per file), then fetches the one map it needs.
CREATE TABLE IF NOT EXISTS sourcemap_files
(
    org_id        UInt64,
    project_id    UInt64,
    bundle_id     String,
    release       String,
    dist          String,
    url           String,
    file_type     LowCardinality(String),
    debug_id      String,
    sourcemap     String,
    sha1          String,
    size          UInt64,
    uploaded_at   DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(uploaded_at)
ORDER BY (org_id, project_id, bundle_id, url)
