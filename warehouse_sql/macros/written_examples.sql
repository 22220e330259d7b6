-- The example page loads a performance run wrote: stamped with its version {v}, in the periods (an hour or a day)
-- of the hours [{start}, {end}) it refreshed. Used by the run's counts and checks (queries/pipelines/written/,
-- queries/pipelines/checks/).
materialized_at = {v:DateTime64(6, 'UTC')} AND start >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 DAY
AND start < {end:DateTime64(3, 'UTC')}
