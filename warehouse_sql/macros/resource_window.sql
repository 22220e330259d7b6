-- The resource rows of the window [since, until) and filters (environment, release, browser; '' = any) with the
-- aggregates of the resource_request_states macro: the whole hours [whole_start, whole_end) from
-- `resource_request_periods` as the hours, days and blocks of days `periods` (hours, start) that tile them
-- (PerfFilters.periods), the partial edge hours aggregated from `resource_facts` the same way (with the facts'
-- marks of a page load's first requests). Used as `FROM ${resource_window}`.
(
    SELECT resource_type, resource, host, page_host, requests, loads, type_loads, total_bytes, max_bytes,
           decoded_bytes, transfer_bytes, transfer_n, duration_sum, dur_hist, blocking, non_blocking, unknown,
           cache_hits, fcp_share_sum, fcp_share_n, compressed_dec, compressed_enc, pages
    FROM resource_request_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND (hours, start) IN {periods:Array(Tuple(UInt16, DateTime('UTC')))}
      AND start >= {whole_start:DateTime64(3, 'UTC')} AND start < {whole_end:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
    UNION ALL
    SELECT resource_type, if(is_request = 1, '', toString(resource)) AS resource_key,
           if(is_request = 1, '', toString(host)) AS host_key, page_host, ${resource_request_states}
    FROM resource_facts FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((ts >= {since:DateTime64(3, 'UTC')} AND ts < {whole_start:DateTime64(3, 'UTC')})
           OR (ts >= {whole_end:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
    GROUP BY resource_type, resource_key, host_key, page_host
)
