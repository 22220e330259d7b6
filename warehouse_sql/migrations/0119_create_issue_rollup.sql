-- What the `issues` mart needs per issue beyond the live counters (events and users come from
-- issue_live_counters), kept as aggregate states at insert time: a tick merges the states of the issues that
-- got events instead of re-reading all their events, so its cost follows the new data, not the table size.
-- Grain: one row per (project_id, issue_id) after merges; read with GROUP BY and the -Merge combinators.
-- Created, then filled from the events already stored, then fed by issue_rollup_mv from every later insert.
CREATE TABLE IF NOT EXISTS issue_rollup
(
    org_id            SimpleAggregateFunction(any, UInt64),
    project_id        UInt64,
    issue_id          UInt64,
    fingerprint       SimpleAggregateFunction(any, String),
    grouping_version  AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    title             AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    culprit           AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    level             AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    platform          AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    exception_type    AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    first_seen        SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen         SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    -- (timestamp, release) of the earliest / latest event with a release; ('', far end) when none has one
    first_release     SimpleAggregateFunction(min, Tuple(DateTime64(3, 'UTC'), String)),
    last_release      SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), String)),
    releases          SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    environments      SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    services          SimpleAggregateFunction(groupUniqArrayArray, Array(String))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, issue_id);

INSERT INTO issue_rollup
SELECT
    any(org_id), project_id, issue_id, any(fingerprint),
    argMaxState(toString(grouping_version), timestamp),
    argMaxState(title, timestamp),
    argMaxState(if(culprit != '', culprit, in_app_frames[1]), timestamp),
    argMaxState(toString(level), timestamp),
    argMaxState(toString(platform), timestamp),
    argMaxState(exception_type, timestamp),
    min(timestamp), max(timestamp),
    min(if(release != '', (timestamp, toString(release)), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), ''))),
    max(if(release != '', (timestamp, toString(release)), (toDateTime64(0, 3, 'UTC'), ''))),
    groupUniqArrayArray(if(release != '', [toString(release)], [])),
    groupUniqArrayArray(if(environment != '', [toString(environment)], [])),
    groupUniqArrayArray(if(service != '', [toString(service)], []))
FROM events
GROUP BY project_id, issue_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_rollup_mv TO issue_rollup AS
SELECT
    any(org_id) AS org_id, project_id, issue_id, any(fingerprint) AS fingerprint,
    argMaxState(toString(grouping_version), timestamp) AS grouping_version,
    argMaxState(title, timestamp) AS title,
    argMaxState(if(culprit != '', culprit, in_app_frames[1]), timestamp) AS culprit,
    argMaxState(toString(level), timestamp) AS level,
    argMaxState(toString(platform), timestamp) AS platform,
    argMaxState(exception_type, timestamp) AS exception_type,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen,
    min(if(release != '', (timestamp, toString(release)), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '')))
        AS first_release,
    max(if(release != '', (timestamp, toString(release)), (toDateTime64(0, 3, 'UTC'), ''))) AS last_release,
    groupUniqArrayArray(if(release != '', [toString(release)], [])) AS releases,
    groupUniqArrayArray(if(environment != '', [toString(environment)], [])) AS environments,
    groupUniqArrayArray(if(service != '', [toString(service)], [])) AS services
FROM events
GROUP BY project_id, issue_id
