-- The capped element sets of every issue as the last `related_issues` run read them (from issue_element_top),
-- one row per (project_id, reason, issue_id), newest materialized_at wins. A tick rewrites the rows of the
-- issues that got events and reads the whole (small: issues × reasons × 20 elements) table as its inverted
-- index element → issues, so its cost depends on the number of issues, never on the number of events.
CREATE TABLE IF NOT EXISTS issue_related_sets
(
    org_id           UInt64,
    project_id       UInt64,
    reason           LowCardinality(String),
    issue_id         UInt64,
    elements         Array(String),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, reason, issue_id)
