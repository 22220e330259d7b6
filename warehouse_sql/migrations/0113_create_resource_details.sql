-- Written by the `resource_breakdown` asset — grain: one row per (project_id, page, day, resource), the
-- resource being its URL without query string. The largest resources (ORDER BY avg_bytes DESC) and the
-- render-blocking ones with their impact (High | Medium | Low, rule in docs/pipelines.md) come from here.
CREATE TABLE IF NOT EXISTS resource_details
(
    org_id              UInt64,
    project_id          UInt64,
    page                String,
    day                 Date,
    resource            String,
    resource_type       LowCardinality(String),
    requests            UInt64,
    avg_bytes           Float64,
    max_bytes           UInt64,
    avg_decoded_bytes   Float64,
    avg_load_ms         Float64,
    p95_load_ms         Float64,
    render_blocking     UInt8,
    impact              LowCardinality(String),   -- '' unless render-blocking
    materialized_at     DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, page, day, resource)
