-- Issue-list facets: per project, day (UTC), issue and filter dimension, the figures the issue list shows.
-- The list filters by environment, release, level, service and time range and still answers from here
-- (days x issues x dimension combinations: thousands of rows where the raw layer holds millions).
-- Fed at insert time by issue_facets_daily_mv, so a new event is in the list at once.
CREATE TABLE IF NOT EXISTS issue_facets_daily
(
    org_id       UInt64,
    project_id   UInt64,
    day          Date,
    issue_id     UInt64,
    environment  LowCardinality(String),
    release      LowCardinality(String),
    level        LowCardinality(String),
    service      LowCardinality(String),
    events       SimpleAggregateFunction(sum, UInt64),
    users        AggregateFunction(uniq, Nullable(String)),
    first_seen   SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen    SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, project_id, day, issue_id, environment, release, level, service)
TTL day + INTERVAL ${retention_days} DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_facets_daily_mv TO issue_facets_daily AS
SELECT
    org_id,
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    environment,
    release,
    level,
    service,
    toUInt64(count()) AS events,
    uniqState(nullIf(user_key, '')) AS users,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen
FROM events
GROUP BY org_id, project_id, day, issue_id, environment, release, level, service;

-- Events stored before this table existed.
INSERT INTO issue_facets_daily
SELECT
    org_id,
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    environment,
    release,
    level,
    service,
    toUInt64(count()) AS events,
    uniqState(nullIf(user_key, '')) AS users,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen
FROM events
GROUP BY org_id, project_id, day, issue_id, environment, release, level, service
