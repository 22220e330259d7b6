-- Mart `recommendations` — grain: one row per (project_id, rule, page, subject) of the latest run, over the
-- last 7 days of the performance marts. Rules and thresholds in docs/pipelines.md.
CREATE TABLE IF NOT EXISTS recommendations
(
    org_id           UInt64,
    project_id       UInt64,
    rule             LowCardinality(String),
    severity         LowCardinality(String),   -- High | Medium | Low
    page             String,
    subject          String,                   -- the resource URL or API endpoint concerned, '' for the page
    message          String,
    evidence         Map(String, Float64),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, rule, page, subject)
