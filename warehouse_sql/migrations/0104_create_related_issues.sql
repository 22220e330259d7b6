-- Mart `related_issues` — grain: one row per (project_id, issue_id, reason, related_issue_id), both directions.
-- reason: same_user | same_time_window | similar_stack | same_release; strength in (0, 1] is the Jaccard
-- index of the two issues' sets (users; 5-minute windows; in-app frames; releases); shared = |A ∩ B|.
CREATE TABLE IF NOT EXISTS related_issues
(
    org_id            UInt64,
    project_id        UInt64,
    issue_id          UInt64,
    related_issue_id  UInt64,
    reason            LowCardinality(String),
    strength          Float64,
    shared            UInt64,
    materialized_at   DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, issue_id, reason, related_issue_id)
