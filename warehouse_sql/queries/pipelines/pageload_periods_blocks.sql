-- Refresh the blocks of 2, 4, 8 and 16 days (grains 'days_2' … 'days_16': a block starts on a multiple of its days
-- since 1970-01-01) of `pageload_periods` that hold the days of the hours [{start}, {end}), by merging their days
-- (grain 'day', refreshed just before by the same tick); a block's 3 fastest and 3 slowest page loads are among its
-- days' own. The days read are those of the 16-day blocks around the range, so every smaller block in it is whole.
INSERT INTO pageload_periods
SELECT org_id, project_id, ${block_period}, environment, release, browser, page,
       ${pageload_merge},
       groupArraySortedArray(3)(fastest),
       arrayMap(x -> (-x.1, x.2, x.3, x.4),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest))),
       {materialized_at:DateTime64(6, 'UTC')}
FROM pageload_periods FINAL
${days_of_blocks}
GROUP BY org_id, project_id, block_grain, block, environment, release, browser, page
