-- The distinct users of every issue (cityHash64 of the user key), kept by the `issues` asset: a tick adds the
-- users of the new events that are not there yet (from issue_element_arrivals, a primary-key lookup) and counts
-- the rows of the touched issues for `users_affected`. Counting sorted key rows costs a fraction of merging
-- every touched issue's uniqExact state (the live counters' users), which made a tick's cost follow the number
-- of users stored. Grain: one row per (project_id, issue_id, user_hash).
CREATE TABLE IF NOT EXISTS issue_users
(
    project_id  UInt64,
    issue_id    UInt64,
    user_hash   UInt64
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, issue_id, user_hash)
SETTINGS index_granularity = 1024;

-- Filled from `events` (and the issues rebuilt) on the next run.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('issues', toDateTime64(0, 3, 'UTC'), now64(6))
