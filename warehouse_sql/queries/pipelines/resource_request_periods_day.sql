-- Refresh the days (grain 'day') of `resource_request_periods` for the UTC days holding the hours [{start}, {end}),
-- by merging their hours' states (grain 'hour'; refreshed just before by the same tick).
INSERT INTO resource_request_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, environment, release, browser,
       resource_type, resource, host, page_host, sum(requests), sum(loads), sum(type_loads), sum(total_bytes),
       max(max_bytes), sum(decoded_bytes), sum(transfer_bytes), sum(transfer_n), sum(duration_sum),
       sumMap(dur_hist.1, dur_hist.2), sum(blocking), sum(non_blocking), sum(unknown), sum(cache_hits),
       sum(fcp_share_sum), sum(fcp_share_n), sum(compressed_dec), sum(compressed_enc),
       groupUniqArrayArray(10)(pages), {materialized_at:DateTime64(6, 'UTC')}
FROM resource_request_periods FINAL
WHERE ${hours_of_days}
GROUP BY org_id, project_id, day, environment, release, browser, resource_type, resource, host, page_host
