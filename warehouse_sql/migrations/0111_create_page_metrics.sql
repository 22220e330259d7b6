-- Mart `page_metrics` — grain: one row per (project_id, page, day UTC) over page loads and navigations.
-- Figures in ms (cls unitless); NULL when no view of that page that day carried the measurement.
CREATE TABLE IF NOT EXISTS page_metrics
(
    org_id                UInt64,
    project_id            UInt64,
    page                  String,
    day                   Date,
    views                 UInt64,
    load_avg_ms           Nullable(Float64),
    load_p50_ms           Nullable(Float64),
    load_p75_ms           Nullable(Float64),
    load_p95_ms           Nullable(Float64),
    ttfb_avg_ms           Nullable(Float64),
    ttfb_p50_ms           Nullable(Float64),
    ttfb_p75_ms           Nullable(Float64),
    ttfb_p95_ms           Nullable(Float64),
    dom_ready_avg_ms      Nullable(Float64),
    dom_ready_p50_ms      Nullable(Float64),
    dom_ready_p75_ms      Nullable(Float64),
    dom_ready_p95_ms      Nullable(Float64),
    resource_load_avg_ms  Nullable(Float64),
    resource_load_p50_ms  Nullable(Float64),
    resource_load_p75_ms  Nullable(Float64),
    resource_load_p95_ms  Nullable(Float64),
    api_calls             UInt64,
    api_avg_ms            Nullable(Float64),
    api_p50_ms            Nullable(Float64),
    api_p75_ms            Nullable(Float64),
    api_p95_ms            Nullable(Float64),
    lcp_p75_ms            Nullable(Float64),
    cls_p75               Nullable(Float64),
    inp_p75_ms            Nullable(Float64),
    materialized_at       DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, page, day)
