-- What `related_issues` compares, kept at insert time as one capped set per issue and reason: the 20 most
-- frequent (by events) users, 5-minute windows, in-app frames and releases of the issue (topK, space-saving:
-- exact while an issue has at most 60 distinct elements of a reason). The cap bounds what a tick compares per
-- issue whatever the issue's size. Grain: one row per (project_id, issue_id, reason) after merges.
-- Created, filled from the events already stored, then fed by issue_element_top_mv from every later insert.
CREATE TABLE IF NOT EXISTS issue_element_top
(
    org_id      SimpleAggregateFunction(any, UInt64),
    project_id  UInt64,
    issue_id    UInt64,
    reason      LowCardinality(String),   -- same_user | same_time_window | similar_stack | same_release
    top         AggregateFunction(topK(20), String)
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, issue_id, reason);

INSERT INTO issue_element_top
SELECT any(org_id), project_id, issue_id, e.1 AS reason, topKState(20)(e.2)
FROM events
ARRAY JOIN ${issue_elements} AS e
GROUP BY project_id, issue_id, reason;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_element_top_mv TO issue_element_top AS
SELECT any(org_id) AS org_id, project_id, issue_id, e.1 AS reason, topKState(20)(e.2) AS top
FROM events
ARRAY JOIN ${issue_elements} AS e
GROUP BY project_id, issue_id, reason
