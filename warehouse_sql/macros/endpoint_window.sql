-- The endpoint rows (per day) of the window [since, until) and filters (environment, release, browser; '' = any;
-- with endpoint_path set only that source, method and path) with the aggregates of the endpoint_call_states
-- macro: the whole hours [whole_start, whole_end) from `endpoint_call_periods` as the hours, days and blocks of
-- days `periods` (hours, start) that tile them (PerfFilters.periods; `day` is a period's first day, so a query
-- per day passes no blocks), the partial edge hours aggregated from `endpoint_facts` the same way (with the
-- facts' marks of a page load's first call and its calls). `slowest`: the part's 5 slowest calls as (−duration,
-- event id, start, status code, description), sorted (the states keep their own 5 slowest: the window's 5
-- slowest are among them); a query that does not select it does not read it. Used as `FROM ${endpoint_window}`.
(
    SELECT toDate(start) AS day, source, method, path, calls, loads, duration_sum, dur_hist, s2xx, s3xx, s4xx, s5xx,
           no_status, bytes_sum, bytes_n, max_per_load, pages,
           arrayZip(arrayMap(d -> -d, slow_ms), slow_event, slow_ts, slow_status, slow_description) AS slowest
    FROM endpoint_call_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND (hours, start) IN {periods:Array(Tuple(UInt16, DateTime('UTC')))}
      AND start >= {whole_start:DateTime64(3, 'UTC')} AND start < {whole_end:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({endpoint_path:String} = ''
           OR (source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}))
    UNION ALL
    SELECT toDate(ts) AS day, toString(source) AS source, toString(method) AS method, toString(path) AS path,
           ${endpoint_call_states},
           groupArraySorted(5)((-duration_ms, toString(tx), ts, status_code, description)) AS slowest
    FROM endpoint_facts FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((ts >= {since:DateTime64(3, 'UTC')} AND ts < {whole_start:DateTime64(3, 'UTC')})
           OR (ts >= {whole_end:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({endpoint_path:String} = ''
           OR (source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}))
    GROUP BY day, source, method, path
)
