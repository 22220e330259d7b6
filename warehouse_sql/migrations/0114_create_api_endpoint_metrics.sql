-- Mart `api_endpoint_metrics` — grain: one row per (project_id, source, method, path, day UTC).
-- source: server (http.server transactions) | client (http.client spans); path has ids, UUIDs and hashes
-- folded ({id}, {uuid}, {hash}). error_pct = 100 * (4xx + 5xx) / calls.
CREATE TABLE IF NOT EXISTS api_endpoint_metrics
(
    org_id           UInt64,
    project_id       UInt64,
    source           LowCardinality(String),
    method           LowCardinality(String),
    path             String,
    day              Date,
    calls            UInt64,
    avg_ms           Float64,
    p50_ms           Float64,
    p95_ms           Float64,
    success          UInt64,
    client_errors    UInt64,
    server_errors    UInt64,
    error_pct        Float64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, source, method, path, day)
