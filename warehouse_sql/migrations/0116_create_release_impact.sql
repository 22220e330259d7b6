-- Mart `release_impact` — grain: one row per (project_id, release); releases ordered by first_seen, each
-- compared with the one before it (*_change_pct = 100 * (this - previous) / previous; NULL without one).
CREATE TABLE IF NOT EXISTS release_impact
(
    org_id                 UInt64,
    project_id             UInt64,
    release                String,
    first_seen             DateTime64(3, 'UTC'),
    previous_release       String,
    views                  UInt64,
    load_p75_ms            Nullable(Float64),
    load_change_pct        Nullable(Float64),
    js_bytes_per_view      Nullable(Float64),
    js_change_pct          Nullable(Float64),
    api_p95_ms             Nullable(Float64),
    api_change_pct         Nullable(Float64),
    error_events           UInt64,
    errors_change_pct      Nullable(Float64),
    new_issues             UInt64,
    new_issues_change_pct  Nullable(Float64),
    materialized_at        DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, release)
