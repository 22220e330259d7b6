-- Per resource (after `resource_type, resource` in a query grouped by them over ${resource_window}): its host,
-- requests, page loads, bytes (total, average, largest, decoded, transfer), average load time, render-blocking
-- counts, cache hits, the mean share of FCP its blocking loads took, compression, its pages, and the page hosts of
-- every resource of the window (`own_hosts`: whether a host is a third party). Shared by resource_list.sql and
-- resource_table.sql.
any(host) AS host, sum(requests) AS requests, sum(loads) AS loads, sum(total_bytes) AS total_bytes,
total_bytes / requests AS avg_bytes, max(max_bytes) AS max_bytes, sum(decoded_bytes) / requests AS avg_decoded_bytes,
if(transfer_n = 0, NULL, sum(transfer_bytes) / transfer_n) AS avg_transfer_bytes,
sum(duration_sum) / requests AS avg_ms,
sum(blocking) AS blocking, sum(non_blocking) AS non_blocking, sum(unknown) AS unknown,
sum(cache_hits) AS cache_hits, sum(transfer_n) AS transfer_n,
if(blocking > 0 AND sum(fcp_share_n) > 0, sum(fcp_share_sum) / sum(fcp_share_n), NULL) AS fcp_share,
sum(compressed_dec) / nullIf(sum(compressed_enc), 0) AS compression_ratio,
groupUniqArrayArray(10)(pages) AS pages,
arrayDistinct(arrayFlatten(groupArray(groupUniqArrayIf(page_host, page_host != '')) OVER ())) AS own_hosts
