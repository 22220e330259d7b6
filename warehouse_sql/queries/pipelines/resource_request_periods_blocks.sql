-- Refresh the blocks of 2, 4, 8 and 16 days (grains 'days_2' … 'days_16') of `resource_request_periods` that hold
-- the days of the hours [{start}, {end}), by merging their days (grain 'day', refreshed just before by the same
-- tick). The days read are those of the 16-day blocks around the range, so every smaller block in it is whole.
INSERT INTO resource_request_periods
SELECT org_id, project_id, ${block_period}, environment, release, browser, resource_type, resource,
       host, page_host, sum(requests), sum(loads), sum(type_loads), sum(total_bytes),
       max(max_bytes), sum(decoded_bytes), sum(transfer_bytes), sum(transfer_n), sum(duration_sum),
       sumMap(dur_hist.1, dur_hist.2), sum(blocking), sum(non_blocking), sum(unknown), sum(cache_hits),
       sum(fcp_share_sum), sum(fcp_share_n), sum(compressed_dec), sum(compressed_enc),
       groupUniqArrayArray(10)(pages), {materialized_at:DateTime64(6, 'UTC')}
FROM resource_request_periods FINAL
${days_of_blocks}
GROUP BY org_id, project_id, block_grain, block, environment, release, browser, resource_type, resource, host,
         page_host
