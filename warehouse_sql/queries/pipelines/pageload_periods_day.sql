-- Refresh the days (grain 'day') of `pageload_periods` for the UTC days holding the hours [{start}, {end}), by
-- merging their hours' states (grain 'hour'; refreshed just before by the same tick); the day's 3 fastest and 3
-- slowest page loads are among its hours' own.
INSERT INTO pageload_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, environment, release, browser, page,
       ${pageload_merge},
       groupArraySortedArray(3)(fastest),
       arrayMap(x -> (-x.1, x.2, x.3, x.4),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest))),
       {materialized_at:DateTime64(6, 'UTC')}
FROM pageload_periods FINAL
WHERE ${hours_of_days}
GROUP BY org_id, project_id, day, environment, release, browser, page
