-- Mart `resource_breakdown` — grain: one row per (project_id, page, day, resource_type);
-- resource_type is JavaScript | CSS | Images | Fonts | API | Other.
CREATE TABLE IF NOT EXISTS resource_breakdown
(
    org_id           UInt64,
    project_id       UInt64,
    page             String,
    day              Date,
    resource_type    LowCardinality(String),
    requests         UInt64,
    views            UInt64,               -- page views that loaded at least one resource of this type
    total_bytes      UInt64,
    avg_bytes        Float64,
    bytes_per_view   Float64,
    total_load_ms    Float64,
    avg_load_ms      Float64,
    p95_load_ms      Float64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, page, day, resource_type)
