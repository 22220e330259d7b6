-- Mart `weekly_trends` — grain: one row per (project_id, page, week_start), week_start the Monday of the ISO
-- week. change_pct = 100 * (load_p75_ms - prev_load_p75_ms) / prev_load_p75_ms (NULL without a previous week).
CREATE TABLE IF NOT EXISTS weekly_trends
(
    org_id            UInt64,
    project_id        UInt64,
    page              String,
    week_start        Date,
    iso_year          UInt16,
    iso_week          UInt8,
    views             UInt64,
    load_avg_ms       Float64,
    load_p75_ms       Float64,
    prev_load_p75_ms  Nullable(Float64),
    change_pct        Nullable(Float64),
    materialized_at   DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, page, week_start)
