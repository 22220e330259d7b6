-- Per release of the project (and environment; '' = any): what its sessions count in the window (the periods of
-- `session_periods` that tile it: edge minutes, hours, days or blocks; stacklens/releases/periods.py), in the 24
-- hours before the window's end (`recent`: adoption) and its first session start within the retention (the day
-- rows: every day with sessions has one; that branch reads no user state). The row with release '' holds the
-- totals of every release (the denominators of adoption); a release always has a name (ingest refuses sessions
-- without one).
SELECT release,
       sumIf(s_sessions, in_window) AS sessions, sumIf(s_errored, in_window) AS errored,
       sumIf(s_crashed, in_window) AS crashed, sumIf(s_abnormal, in_window) AS abnormal,
       uniqCombined64MergeIf(12)(s_users, in_window) AS users,
       uniqCombined64MergeIf(12)(s_errored_users, in_window) AS errored_users,
       uniqCombined64MergeIf(12)(s_crashed_users, in_window) AS crashed_users,
       sumIf(s_sessions, in_recent) AS recent_sessions,
       uniqCombined64MergeIf(12)(s_users, in_recent) AS recent_users,
       minIf(s_first, is_first) AS first_seen
FROM
(
    -- The state columns renamed: the outer aliases reuse their names.
    SELECT release, sessions AS s_sessions, errored AS s_errored, crashed AS s_crashed, abnormal AS s_abnormal,
           users AS s_users, errored_users AS s_errored_users, crashed_users AS s_crashed_users,
           (grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))} AS in_window,
           (grain, start) IN {recent:Array(Tuple(String, DateTime('UTC')))} AS in_recent,
           toDateTime64(0, 3, 'UTC') AS s_first, 0 AS is_first
    FROM session_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND (in_window OR in_recent)
    UNION ALL
    SELECT release, 0, 0, 0, 0, initializeAggregation('uniqCombined64State(12)', ''),
           initializeAggregation('uniqCombined64State(12)', ''), initializeAggregation('uniqCombined64State(12)', ''),
           0, 0, first_started, 1
    FROM session_periods
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day'
      AND ({environment:String} = '' OR environment = {environment:String})
)
GROUP BY GROUPING SETS ((release), ())
SETTINGS ${view_settings}
