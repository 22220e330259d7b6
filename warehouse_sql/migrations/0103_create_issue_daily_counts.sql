-- Mart `issue_daily_counts` — grain: one row per (project_id, issue_id, day UTC): events and users that day.
-- Daily-partitioned asset: a run rewrites the days it covers (newest materialized_at wins; read with FINAL).
CREATE TABLE IF NOT EXISTS issue_daily_counts
(
    org_id           UInt64,
    project_id       UInt64,
    issue_id         UInt64,
    day              Date,
    events           UInt64,
    users            UInt64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, issue_id, day)
