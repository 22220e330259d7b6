-- issue_users, second layout: the distinct users of every issue as single-key member rows (k = cityHash64 of
-- issue id and user hash: one lookup key instead of three, which halves a tick's lookup) plus one running
-- count row per issue (kind 0, k = issue id). A run writes an issue's new members and its count increment in
-- one INSERT, so both land together or not at all, and `users_affected` reads the count rows of the touched
-- issues (ten thousand rows at most per tick) instead of counting their members. A run that rebuilds from the
-- events (the first, or after a long outage) ends by correcting every count from its members.
DROP TABLE IF EXISTS issue_users;

CREATE TABLE IF NOT EXISTS issue_users
(
    kind        UInt8,                                    -- 0: count row, 1: member row
    k           UInt64,                                   -- 0: issue_id; 1: cityHash64(issue_id, user hash)
    issue_id    SimpleAggregateFunction(any, UInt64),
    project_id  SimpleAggregateFunction(any, UInt64),
    users       SimpleAggregateFunction(sum, Int64)       -- count rows: users added; member rows: 0
)
ENGINE = AggregatingMergeTree
ORDER BY (kind, k)
SETTINGS index_granularity = 256;

-- Filled from `events` (and the issues rebuilt) on the next run.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('issues', toDateTime64(0, 3, 'UTC'), now64(6))
