-- Issue tag pairs: per organization, project, tag key and value, day (UTC) and issue, how many events carried
-- the pair. The issue list's `key:value` search reads this instead of the raw events: the sort key starts
-- with (org_id, project_id, tag_key, tag_value), so a search is an index range read whatever the event count.
-- Fed at insert time by issue_tags_daily_mv, so a new event is searchable at once. The search only asks
-- whether an issue has the pair in the range, so a backfilled event counted twice (an insert racing this
-- migration) cannot change an answer.
CREATE TABLE IF NOT EXISTS issue_tags_daily
(
    org_id      UInt64,
    project_id  UInt64,
    tag_key     LowCardinality(String),
    tag_value   String,
    day         Date,
    issue_id    UInt64,
    events      SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, project_id, tag_key, tag_value, day, issue_id)
TTL day + INTERVAL ${retention_days} DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_tags_daily_mv TO issue_tags_daily AS
SELECT
    org_id,
    project_id,
    tag_key,
    tag_value,
    toDate(timestamp) AS day,
    issue_id,
    toUInt64(count()) AS events
FROM events
ARRAY JOIN mapKeys(tags) AS tag_key, mapValues(tags) AS tag_value
GROUP BY org_id, project_id, tag_key, tag_value, day, issue_id;

-- Events stored before this table existed.
INSERT INTO issue_tags_daily
SELECT
    org_id,
    project_id,
    tag_key,
    tag_value,
    toDate(timestamp) AS day,
    issue_id,
    toUInt64(count()) AS events
FROM events
ARRAY JOIN mapKeys(tags) AS tag_key, mapValues(tags) AS tag_value
GROUP BY org_id, project_id, tag_key, tag_value, day, issue_id
