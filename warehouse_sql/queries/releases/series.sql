-- One release over time (and environment; '' = any): per bucket (an hour or a UTC day, `bucket_seconds`) of the
-- periods tiling [since, until) — sessions, errored, crashed, crashed users and users from `session_periods`; page
-- loads and the load time p75 from the page-load states `pageload_periods` (the merged 1 % log histograms, as the
-- performance views read them); error events from `events`. A bucket without sessions, page loads or errors has
-- no row: the charts draw it as a gap, never as 0.
SELECT bucket, kind, sessions, errored, crashed, users, crashed_users, views, load_p75, errors
FROM
(
    SELECT toDateTime(intDiv(toUInt32(start), {bucket_seconds:UInt32}) * {bucket_seconds:UInt32}, 'UTC') AS bucket,
           'sessions' AS kind, sum(sessions) AS sessions, sum(errored) AS errored, sum(crashed) AS crashed,
           uniqCombined64Merge(12)(users) AS users, uniqCombined64Merge(12)(crashed_users) AS crashed_users,
           toUInt64(0) AS views, CAST(NULL, 'Nullable(Float64)') AS load_p75, toUInt64(0) AS errors
    FROM session_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND release = {release:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND (grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}
    GROUP BY bucket
    UNION ALL
    SELECT toDateTime(intDiv(toUInt32(start), {bucket_seconds:UInt32}) * {bucket_seconds:UInt32}, 'UTC') AS bucket,
           'pageloads' AS kind, 0, 0, 0, 0, 0, sum(views) AS views,
           toNullable(quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2)) AS load_p75,
           toUInt64(0)
    FROM pageload_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND release = {release:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND (grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}
    GROUP BY bucket
    UNION ALL
    SELECT toDateTime(intDiv(toUInt32(toDateTime(timestamp)), {bucket_seconds:UInt32}) * {bucket_seconds:UInt32}, 'UTC')
               AS bucket,
           'errors' AS kind, 0, 0, 0, 0, 0, toUInt64(0), CAST(NULL, 'Nullable(Float64)'), count() AS errors
    FROM events
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND release = {release:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
    GROUP BY bucket
)
ORDER BY bucket, kind
SETTINGS ${view_settings}
