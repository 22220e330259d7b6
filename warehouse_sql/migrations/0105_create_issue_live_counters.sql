-- Live per-issue counters, fed at insert time by issue_live_counters_mv: an event counts in its issue's
-- figures the moment /api/ingest has stored it (the `issues` mart catches up on its one-minute schedule).
-- Grain: one row per (project_id, issue_id) after merges; read with GROUP BY and the -Merge combinators.
CREATE TABLE IF NOT EXISTS issue_live_counters
(
    org_id          SimpleAggregateFunction(any, UInt64),  -- functionally dependent on project_id
    project_id      UInt64,
    issue_id        UInt64,
    events          SimpleAggregateFunction(sum, UInt64),
    users           AggregateFunction(uniqExact, String),
    first_seen      SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen       SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    last_received   SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    title           AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    culprit         AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    level           AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    platform        AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
    last_release    AggregateFunction(argMax, String, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, issue_id)
