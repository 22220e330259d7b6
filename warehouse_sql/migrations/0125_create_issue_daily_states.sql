-- Per project, issue and UTC day: events stored and the users' uniqExact state, kept at insert time so that
-- `issue_daily_counts` rebuilds a day from one small row per issue instead of re-reading the day's events.
-- Grain: one row per (project_id, issue_id, day) after merges; read with GROUP BY and uniqExactMerge.
-- Created, filled from the events already stored, then fed by issue_daily_states_mv from every later insert.
CREATE TABLE IF NOT EXISTS issue_daily_states
(
    org_id      SimpleAggregateFunction(any, UInt64),
    project_id  UInt64,
    issue_id    UInt64,
    day         Date,
    events      SimpleAggregateFunction(sum, UInt64),
    users       AggregateFunction(uniqExact, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (day, project_id, issue_id)
TTL day + INTERVAL ${retention_days} DAY;

INSERT INTO issue_daily_states
SELECT any(org_id), project_id, issue_id, toDate(timestamp) AS day, count(), uniqExactStateIf(user_key, user_key != '')
FROM events
GROUP BY project_id, issue_id, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_daily_states_mv TO issue_daily_states AS
SELECT any(org_id) AS org_id, project_id, issue_id, toDate(timestamp) AS day, toUInt64(count()) AS events,
       uniqExactStateIf(user_key, user_key != '') AS users
FROM events
GROUP BY project_id, issue_id, day
