-- The state rows a performance run wrote: stamped with its version {v}, in the periods of the hours [{start},
-- {end}) it refreshed; the blocks of days a run rewrites are those of the 16-day blocks around its hours. Used by
-- the run's counts and checks (queries/pipelines/written/, queries/pipelines/checks/).
materialized_at = {v:DateTime64(6, 'UTC')} AND start >= {start:DateTime64(3, 'UTC')} - INTERVAL 16 DAY
AND start < {end:DateTime64(3, 'UTC')} + INTERVAL 16 DAY
