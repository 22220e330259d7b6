-- Issue daily totals: per organization, project, day (UTC) and issue, the issue list's figures across every
-- environment, release, level and service. The list answers from here when no dimension filter is set (the
-- usual view): one row per issue and day, where issue_facets_daily holds one per dimension combination too.
-- Fed at insert time by issue_totals_daily_mv, so a new event is in the list at once.
CREATE TABLE IF NOT EXISTS issue_totals_daily
(
    org_id       UInt64,
    project_id   UInt64,
    day          Date,
    issue_id     UInt64,
    events       SimpleAggregateFunction(sum, UInt64),
    users        AggregateFunction(uniq, Nullable(String)),
    first_seen   SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen    SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, project_id, day, issue_id)
TTL day + INTERVAL ${retention_days} DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_totals_daily_mv TO issue_totals_daily AS
SELECT
    org_id,
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    toUInt64(count()) AS events,
    uniqState(nullIf(user_key, '')) AS users,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen
FROM events
GROUP BY org_id, project_id, day, issue_id;

-- Events stored before this table existed.
INSERT INTO issue_totals_daily
SELECT
    org_id,
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    toUInt64(count()) AS events,
    uniqState(nullIf(user_key, '')) AS users,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen
FROM events
GROUP BY org_id, project_id, day, issue_id
