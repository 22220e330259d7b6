-- The hour periods (grain 'hour') of the UTC days holding the hours [{start}, {end}): what a pipeline step merges
-- into those days once it has refreshed the hours (queries/pipelines/*_day.sql). Used as `WHERE ${hours_of_days}`.
grain = 'hour' AND start >= toStartOfDay({start:DateTime64(3, 'UTC')})
AND start < toStartOfDay({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND) + INTERVAL 1 DAY
