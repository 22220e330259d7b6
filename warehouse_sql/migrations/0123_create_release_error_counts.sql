-- Error events per project and release, kept at insert time for `release_impact` (error events per release;
-- new issues come from issue_rollup.first_release), so its tick does not re-read every event of a project.
-- Grain: one row per (project_id, release) after merges (release '' is not kept); read with GROUP BY.
-- Created, filled from the events already stored, then fed by release_error_counts_mv from every later insert.
CREATE TABLE IF NOT EXISTS release_error_counts
(
    org_id      SimpleAggregateFunction(any, UInt64),
    project_id  UInt64,
    release     String,
    events      SimpleAggregateFunction(sum, UInt64),
    first_seen  SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, release);

INSERT INTO release_error_counts
SELECT any(org_id), project_id, toString(release) AS release, count(), min(timestamp)
FROM events WHERE release != ''
GROUP BY project_id, release;

CREATE MATERIALIZED VIEW IF NOT EXISTS release_error_counts_mv TO release_error_counts AS
SELECT any(org_id) AS org_id, project_id, toString(release) AS release, toUInt64(count()) AS events,
       min(timestamp) AS first_seen
FROM events WHERE release != ''
GROUP BY project_id, release
