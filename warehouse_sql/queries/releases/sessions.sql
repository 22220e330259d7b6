-- Per release of the project (and environment; '' = any): what its sessions count in the window (the periods of
-- `session_periods` that tile it: edge minutes, hours, days or blocks; stacklens/releases/periods.py) and in the
-- 24 hours before the window's end (`recent`: adoption). The row with release '' holds the totals of every release
-- (the denominators of adoption); a release always has a name (ingest refuses sessions without one). The releases'
-- first session starts are a read of their own (releases/first_sessions.sql): as a branch of this one, reading
-- only the day rows' first starts, it still made the user states' read ~10 ms slower (bench/releases.py).
SELECT release,
       sumIf(s_sessions, in_window) AS sessions, sumIf(s_errored, in_window) AS errored,
       sumIf(s_crashed, in_window) AS crashed, sumIf(s_abnormal, in_window) AS abnormal,
       uniqCombined64MergeIf(12)(s_users, in_window) AS users,
       uniqCombined64MergeIf(12)(s_errored_users, in_window) AS errored_users,
       uniqCombined64MergeIf(12)(s_crashed_users, in_window) AS crashed_users,
       sumIf(s_sessions, in_recent) AS recent_sessions,
       uniqCombined64MergeIf(12)(s_users, in_recent) AS recent_users
FROM
(
    -- The state columns renamed: the outer aliases reuse their names.
    SELECT release, sessions AS s_sessions, errored AS s_errored, crashed AS s_crashed, abnormal AS s_abnormal,
           users AS s_users, errored_users AS s_errored_users, crashed_users AS s_crashed_users,
           (grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))} AS in_window,
           (grain, start) IN {recent:Array(Tuple(String, DateTime('UTC')))} AS in_recent
    FROM session_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND (in_window OR in_recent)
)
GROUP BY GROUPING SETS ((release), ())
SETTINGS ${view_settings}
