-- What `related_issues` compares, per issue and reason: a bottom-10 MinHash sketch — the 10 smallest distinct
-- cityHash64 values of the issue's users, 5-minute windows, in-app frames and releases. A sketch is a set, so
-- re-reading an event (the watermark overlap) never changes it, and it changes only when a new element hashes
-- below the issue's 10th smallest (rarer the bigger the issue). Replaces the topK(20) states of
-- issue_element_top (reading one cost ~10 µs, 40,000 of them a tick) and the capped sets of issue_related_sets.
--
-- issue_element_arrivals: the elements of every stored event, by arrival, fed by a materialized view in the
-- same INSERT that stores the event, so a tick reads only what arrived since its watermark (primary key
-- range). Kept 3 days: a run whose watermark is older than 2 days rebuilds every sketch from `events`.
-- issue_sketches: one row per (project_id, reason, issue_id), newest materialized_at wins; written by the
-- `related_issues` asset only when a sketch changed.
DROP VIEW IF EXISTS issue_element_top_mv;

DROP TABLE IF EXISTS issue_element_top;

DROP TABLE IF EXISTS issue_related_sets;

CREATE TABLE IF NOT EXISTS issue_element_arrivals
(
    received_at  DateTime64(3, 'UTC'),
    org_id       UInt64,
    project_id   UInt64,
    issue_id     UInt64,
    reason       LowCardinality(String),   -- same_user | same_time_window | similar_stack | same_release
    element      UInt64                    -- cityHash64 of the user key, window start, frame or release
)
ENGINE = MergeTree
PARTITION BY toDate(received_at)
ORDER BY (received_at, project_id, issue_id)
TTL toDateTime(received_at) + INTERVAL 3 DAY
SETTINGS ttl_only_drop_parts = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_element_arrivals_mv TO issue_element_arrivals AS
SELECT max(received_at) AS received_at, any(org_id) AS org_id, project_id, issue_id, e.1 AS reason,
       cityHash64(e.2) AS element
FROM events
ARRAY JOIN ${issue_elements} AS e
GROUP BY project_id, issue_id, reason, element;

CREATE TABLE IF NOT EXISTS issue_sketches
(
    org_id           UInt64,
    project_id       UInt64,
    reason           LowCardinality(String),
    issue_id         UInt64,
    hashes           Array(UInt64),   -- ascending; fewer than 10 = the issue's whole set
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, reason, issue_id);

-- Rebuilt from `events` (sketches and relations) on the next run.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('related_issues', toDateTime64(0, 3, 'UTC'), now64(6))
