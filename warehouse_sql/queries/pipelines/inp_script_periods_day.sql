-- Refresh the days (grain 'day') of `inp_script_periods` for the UTC days holding the hours [{start}, {end}), by
-- adding up their hours (grain 'hour'; refreshed just before by the same tick): an interaction lies in one hour, so
-- the interactions of the hours add up to the day's.
INSERT INTO inp_script_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, environment, release, browser, page, url,
       host, function, invoker, max(third), sum(runs), sum(interactions), sum(ms), sum(input_delay_ms), sum(processing_ms),
       sum(presentation_ms), {materialized_at:DateTime64(6, 'UTC')}
FROM inp_script_periods FINAL
WHERE ${hours_of_days}
GROUP BY org_id, project_id, day, environment, release, browser, page, url, host, function, invoker
