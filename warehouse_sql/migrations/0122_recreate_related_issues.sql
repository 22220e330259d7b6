-- Mart `related_issues` — grain: one row per (project_id, issue_id, reason, related_issue_id), both directions.
-- reason: same_user | same_time_window | similar_stack | same_release; strength in (0, 1] is the Jaccard
-- index of the two issues' capped sets (issue_element_top: the 20 most frequent users; 5-minute windows;
-- in-app frames; releases); shared = |A ∩ B| of those sets. A relation that no longer holds gets a row with
-- is_deleted = 1, which FINAL hides. Replaces the first layout (rebuilt from raw on the next run: its
-- watermark is reset) and retires issue_elements, whose uncapped pairs made a tick cost the whole table.
DROP VIEW IF EXISTS issue_elements_mv;

DROP TABLE IF EXISTS issue_elements;

DROP TABLE IF EXISTS related_issues;

CREATE TABLE IF NOT EXISTS related_issues
(
    org_id            UInt64,
    project_id        UInt64,
    issue_id          UInt64,
    related_issue_id  UInt64,
    reason            LowCardinality(String),
    strength          Float64,
    shared            UInt64,
    materialized_at   DateTime64(6, 'UTC'),
    is_deleted        UInt8
)
ENGINE = ReplacingMergeTree(materialized_at, is_deleted)
ORDER BY (project_id, issue_id, reason, related_issue_id);

INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('related_issues', toDateTime64(0, 3, 'UTC'), now64(6))
