-- Release health states: per organization, project, release, environment and period, what the raw `sessions`
-- (migration 0011) count, as Relay's metrics extraction counts them (docs/releases.md), so the release pages, the
-- releases API and the alert rules read a few hundred state rows instead of every session update.
--   grain, start   the period a row covers (the grains of the page-load states, migration 0148): a minute, an hour,
--                  a UTC day, or an aligned block of 2, 4, 8 or 16 days; the grain's value is its length in minutes.
--                  A read tiles its window with the minutes of its partial edge hours, its other whole hours and
--                  its whole days (or blocks), in one read of this table. A session belongs to the period its
--                  `started` falls in, as Relay buckets it: every update of a session repeats `started`, so all of
--                  them land in one minute and a minute counts each session once.
--   sessions       sessions started (an update with init, or an aggregate bucket's quantity)
--   errored        sessions that saw an error: errors > 0 or a status errored, crashed, abnormal or unhandled
--                  (crashed and abnormal ones included, as Sentry's errored rate counts them)
--   crashed        sessions that ended crashed; abnormal: ended abnormal (killed, never closed)
--   first_started  the period's earliest session start (a release's first seen)
--   users, errored_users, crashed_users
--                  distinct `did` (the user) as uniqCombined64 states of precision 12, as Snuba keeps Sentry's user
--                  sets in uniqCombined64: exact up to about 128 users a state, beyond a HyperLogLog of 4,096 cells
--                  (about 2 % low at 1,000 to 5,000 users; 3 KiB a state). The default 2^17 cells made each state
--                  96 KiB and a 30-day list of 100 releases spend half a second reading them (bench/releases.py).
--                  '' is not a user.
-- Written per grain by the pipeline queries named after the table and grain (queries/pipelines/
-- session_periods_minute.sql: minutes from the raw sessions of the hours that received updates; _hour, _day,
-- _blocks merged from the finer grain), all by the session_states asset. Re-running a period replaces its rows
-- (ReplacingMergeTree on materialized_at; reads use FINAL).
CREATE TABLE IF NOT EXISTS session_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('minute' = 1, 'hour' = 60, 'day' = 1440, 'days_2' = 2880, 'days_4' = 5760, 'days_8' = 11520, 'days_16' = 23040),
    start            DateTime('UTC'),
    release          LowCardinality(String),
    environment      LowCardinality(String),
    sessions         UInt64,
    errored          UInt64,
    crashed          UInt64,
    abnormal         UInt64,
    first_started    DateTime64(3, 'UTC'),
    users            AggregateFunction(uniqCombined64(12), String),
    errored_users    AggregateFunction(uniqCombined64(12), String),
    crashed_users    AggregateFunction(uniqCombined64(12), String),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, release, environment)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

-- Which hours of `started` received session updates, and the newest receive time of the raw sessions, kept at
-- insert time like the other raw tables' (migrations 0124, 0127): what the session_states asset's schedule plans
-- from. Keyed by the hour of `started`, the period a session is counted in, so a late update (a session closed
-- hours after it began) refreshes the hour that counts it.
-- The views first, then the rows already stored: a row landing in between is counted twice, which a maximum
-- does not mind (the other order could miss it).
CREATE MATERIALIZED VIEW IF NOT EXISTS raw_arrival_hours_sessions_mv TO raw_arrival_hours AS
SELECT 'sessions' AS source, project_id, toStartOfHour(started) AS hour, max(received) AS received
FROM sessions GROUP BY project_id, hour;

INSERT INTO raw_arrival_hours
SELECT 'sessions', project_id, toStartOfHour(started) AS hour, max(received) FROM sessions GROUP BY project_id, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_received_sessions_mv TO raw_received AS
SELECT 'sessions' AS source, max(received) AS received FROM sessions;

INSERT INTO raw_received
SELECT 'sessions', max(received) FROM sessions HAVING count() > 0;

-- The states fill on the asset's first run: it starts from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('session_states', toDateTime64(0, 3, 'UTC'), now64(6))
