-- The 5 slowest calls of one endpoint (source, method, parameterised path) in [since, until) and filters, with
-- the page load or server transaction they belong to (its waterfall): the slowest of the 5 slowest calls each
-- whole day (`endpoint_call_days`) and other whole hour (`endpoint_call_hours`) keeps, and of the calls of the
-- partial edge hours (`endpoint_facts`) — the same order (duration descending, then event id), so the same 5
-- calls a scan of the window's calls finds.
SELECT event_id, ts, duration_ms, status_code, description
FROM
(
    SELECT slow.1 AS duration_ms, slow.2 AS event_id, slow.3 AS ts, slow.4 AS status_code, slow.5 AS description
    FROM endpoint_call_days FINAL
    ARRAY JOIN arrayZip(slow_ms, slow_event, slow_ts, slow_status, slow_description) AS slow
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND day >= {day_start:DateTime64(3, 'UTC')} AND day < {day_end:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}
    UNION ALL
    SELECT slow.1 AS duration_ms, slow.2 AS event_id, slow.3 AS ts, slow.4 AS status_code, slow.5 AS description
    FROM endpoint_call_hours FINAL
    ARRAY JOIN arrayZip(slow_ms, slow_event, slow_ts, slow_status, slow_description) AS slow
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND hour >= {whole_start:DateTime64(3, 'UTC')} AND hour < {whole_end:DateTime64(3, 'UTC')}
      AND (hour < {day_start:DateTime64(3, 'UTC')} OR hour >= {day_end:DateTime64(3, 'UTC')})
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}
    UNION ALL
    SELECT duration_ms, toString(tx) AS event_id, ts, status_code, description
    FROM endpoint_facts FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((ts >= {since:DateTime64(3, 'UTC')} AND ts < {whole_start:DateTime64(3, 'UTC')})
           OR (ts >= {whole_end:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}
)
ORDER BY duration_ms DESC, event_id
LIMIT 5
