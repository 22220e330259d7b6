-- Refresh the blocks of 2, 4, 8 and 16 days (grains 'days_2' … 'days_16') of `resource_request_periods` that hold
-- the days of the hours [{start}, {end}), by merging their days (grain 'day', refreshed just before by the same
-- tick). The days read are those of the 16-day blocks around the range, so every smaller block in it is whole.
INSERT INTO resource_request_periods
SELECT org_id, project_id, concat('days_', toString(s)) AS block_grain,
       toDateTime(toDate(intDiv(toUInt32(toDate(start)), s) * s), 'UTC') AS block, environment, release, browser,
       resource_type, resource, host, page_host, sum(requests), sum(loads), sum(type_loads), sum(total_bytes),
       max(max_bytes), sum(decoded_bytes), sum(transfer_bytes), sum(transfer_n), sum(duration_sum),
       sumMap(dur_hist.1, dur_hist.2), sum(blocking), sum(non_blocking), sum(unknown), sum(cache_hits),
       sum(fcp_share_sum), sum(fcp_share_n), sum(compressed_dec), sum(compressed_enc),
       groupUniqArrayArray(10)(pages), {materialized_at:DateTime64(6, 'UTC')}
FROM resource_request_periods FINAL
ARRAY JOIN [2, 4, 8, 16] AS s
WHERE grain = 'day'
  AND start >= toDateTime(toDate(intDiv(toUInt32(toDate({start:DateTime64(3, 'UTC')})), 16) * 16), 'UTC')
  AND start < toDateTime(toDate(intDiv(toUInt32(toDate({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND)), 16) * 16 + 16), 'UTC')
GROUP BY org_id, project_id, block_grain, block, environment, release, browser, resource_type, resource, host,
         page_host
