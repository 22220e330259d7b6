-- What `related_issues` compares, kept at insert time so a tick looks up only the elements of the issues
-- that got events: per issue its users, 5-minute windows, in-app frames and releases.
-- Grain: one row per (project_id, reason, element, issue_id) after merges (read with DISTINCT).
CREATE TABLE IF NOT EXISTS issue_elements
(
    org_id      SimpleAggregateFunction(any, UInt64),
    project_id  UInt64,
    reason      LowCardinality(String),   -- same_user | same_time_window | similar_stack | same_release
    element     String,
    issue_id    UInt64
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, reason, element, issue_id)
