-- Refresh the days (grain 'day') of `inp_periods` for the UTC days holding the hours [{start}, {end}), by merging
-- their hours (grain 'hour'; refreshed just before by the same tick; macro inp_merge).
INSERT INTO inp_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, environment, release, browser, page,
       target, type, ${inp_merge}, {materialized_at:DateTime64(6, 'UTC')}
FROM inp_periods FINAL
WHERE ${hours_of_days}
GROUP BY org_id, project_id, day, environment, release, browser, page, target, type
