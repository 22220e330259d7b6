-- Refresh the blocks of 2, 4, 8 and 16 days (hours = 48 … 384) of `pageload_periods` (migration 0145) that hold
-- the days of the hours [{start}, {end}), by merging their days (hours = 24, refreshed just before by the same
-- tick); a block's 3 fastest and 3 slowest page loads are among its days' own. The days read are those of the
-- 16-day blocks around the range, so every smaller block in it is whole.
INSERT INTO pageload_periods
SELECT org_id, project_id, toDateTime(toDate(intDiv(toUInt32(toDate(start)), s) * s), 'UTC') AS block,
       toUInt16(24 * s) AS block_hours, environment, release, browser, page, ${pageload_merge},
       groupArraySortedArray(3)(fastest),
       arrayMap(x -> (-x.1, x.2, x.3, x.4),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest))),
       {materialized_at:DateTime64(6, 'UTC')}
FROM pageload_periods FINAL
ARRAY JOIN [2, 4, 8, 16] AS s
WHERE hours = 24
  AND start >= toDateTime(toDate(intDiv(toUInt32(toDate({start:DateTime64(3, 'UTC')})), 16) * 16), 'UTC')
  AND start < toDateTime(toDate(intDiv(toUInt32(toDate({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND)), 16) * 16 + 16), 'UTC')
GROUP BY org_id, project_id, block, block_hours, environment, release, browser, page
