-- Refresh the minutes (grain 'minute') of `session_periods` (migration 0170) whose sessions started in
-- [{start}, {end}) from the raw `sessions`, counting as Relay's metrics extraction counts (docs/releases.md): per
-- minute of `started`, release and environment — sessions started (an update with init; an aggregate bucket's
-- quantity), errored (errors > 0 or an error status; crashed and abnormal included), crashed, abnormal, and the
-- users, errored users and crashed users as uniqCombined64 states. A session's updates all repeat its `started`,
-- so they all fall in one minute: a session update counts its session once however many updates it sent
-- (uniqExact of the session id), an aggregate row counts its quantity.
INSERT INTO session_periods
SELECT org_id, project_id, 'minute' AS grain, toStartOfMinute(started) AS minute, release, environment,
       uniqExactIf(session_id, init = 1 AND NOT aggregate) + sumIf(quantity, init = 1 AND aggregate) AS sessions,
       uniqExactIf(session_id, bad AND NOT aggregate) + sumIf(quantity, bad AND aggregate) AS errored,
       uniqExactIf(session_id, status = 'crashed' AND NOT aggregate)
           + sumIf(quantity, status = 'crashed' AND aggregate) AS crashed,
       uniqExactIf(session_id, status = 'abnormal' AND NOT aggregate)
           + sumIf(quantity, status = 'abnormal' AND aggregate) AS abnormal,
       min(started) AS first_started,
       uniqCombined64StateIf(12)(distinct_id, distinct_id != '') AS users,
       uniqCombined64StateIf(12)(distinct_id, distinct_id != '' AND bad) AS errored_users,
       uniqCombined64StateIf(12)(distinct_id, distinct_id != '' AND status = 'crashed') AS crashed_users,
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, session_id, distinct_id, status, init, quantity, started, release, environment,
           session_id = toUUID('00000000-0000-0000-0000-000000000000') AS aggregate,
           errors > 0 OR status IN ('errored', 'crashed', 'abnormal', 'unhandled') AS bad
    FROM sessions
    WHERE started >= {start:DateTime64(3, 'UTC')} AND started < {end:DateTime64(3, 'UTC')}
)
GROUP BY org_id, project_id, minute, release, environment
