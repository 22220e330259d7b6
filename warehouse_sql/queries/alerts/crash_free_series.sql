-- A crash-free rate rule's past evaluations (its 30-day preview): per evaluation time and release, what the
-- release's sessions count in the rule's window [at - window, at) — sessions, crashed sessions, users and crashed
-- users — from the session states `session_periods` the release pages and the live rule read.
-- The evaluation times are {count} steps of {step_seconds} from {first} (whole hours, or 6 hours), the window
-- {window_seconds} long; {grain} is 'hour' when the window is whole hours (every hour row then lies inside or
-- outside a window, whole) and 'minute' otherwise. A period row counts for the evaluations whose window holds it:
-- at > start and at - window <= start, i.e. the indexes i with (start - first) / step < i <= (start + window -
-- first) / step, computed per row (no join of every row with every time). Users are the uniqCombined64 states
-- merged over the window's periods, as the release pages merge them.
SELECT at, release, sum(sessions) AS sessions, sum(crashed) AS crashed,
       uniqCombined64Merge(12)(users) AS users, uniqCombined64Merge(12)(crashed_users) AS crashed_users
FROM
(
    SELECT {first:DateTime('UTC')} + toIntervalSecond(i * {step_seconds:UInt32}) AS at, release, sessions,
           crashed, users, crashed_users
    FROM session_periods FINAL
    ARRAY JOIN range(
        toUInt64(greatest(0, toInt64(floor((toInt64(start) - toInt64({first:DateTime('UTC')})) / {step_seconds:UInt32})) + 1)),
        toUInt64(greatest(0, least(toInt64({count:UInt32}) - 1,
            toInt64(floor((toInt64(start) + {window_seconds:UInt32} - toInt64({first:DateTime('UTC')})) / {step_seconds:UInt32}))) + 1))
    ) AS i
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = {grain:String}
      AND start >= {first:DateTime('UTC')} - toIntervalSecond({window_seconds:UInt32})
      AND start < {first:DateTime('UTC')} + toIntervalSecond(({count:UInt32} - 1) * {step_seconds:UInt32})
      AND ({environment:String} = '' OR environment = {environment:String})
)
GROUP BY at, release
SETTINGS ${view_settings}
