-- The endpoint rows (per day) of the window [since, until) and filters (environment, release, browser; '' = any;
-- with endpoint_path set only that source, method and path) with the aggregates of the endpoint_call_states
-- macro: the rows of `endpoint_call_periods` of the periods that tile the window (macro period_tiles; single days
-- instead of blocks when a query per day asks for them; `day` is a period's first day). `slowest`: the period's 5
-- slowest calls as (−duration, event id, start, status code, description), sorted (the states keep their own 5
-- slowest: the window's 5 slowest are among them); a query that does not select it does not read it. Used as
-- `FROM ${endpoint_window}`.
(
    SELECT toDate(start) AS day, source, method, path, calls, loads, duration_sum, dur_hist, s2xx, s3xx, s4xx, s5xx,
           no_status, bytes_sum, bytes_n, max_per_load, pages,
           arrayZip(arrayMap(d -> -d, slow_ms), slow_event, slow_ts, slow_status, slow_description) AS slowest
    FROM endpoint_call_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ${period_tiles}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({endpoint_path:String} = ''
           OR (source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}))
)
