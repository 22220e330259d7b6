-- The resource rows of the window [since, until) and filters (environment, release, browser; '' = any): the rows of
-- `resource_request_periods` of the periods that tile the window (macro period_tiles). One read of one table: a
-- second branch over `resource_facts` for the edges cost the engine about 20 ms more to analyse and
-- plan than it read (docs/decisions.md, "Windows in whole minutes"). `release` and `start` tell which releases
-- served a resource, and when (resource_list.sql). Used as `FROM ${resource_window}`.
(
    SELECT resource_type, resource, host, page_host, requests, loads, type_loads, total_bytes, max_bytes,
           decoded_bytes, transfer_bytes, transfer_n, duration_sum, dur_hist, blocking, non_blocking, unknown,
           cache_hits, fcp_share_sum, fcp_share_n, compressed_dec, compressed_enc, pages, release, start
    FROM resource_request_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ${period_tiles}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
)
