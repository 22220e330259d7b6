-- The fact rows a performance run wrote: stamped with its version {v}, in the hours [{start}, {end}) it refreshed
-- (a fact lies in its hour), so counting and checking them reads that span, not the table's history. Used by the
-- run's counts and checks (queries/pipelines/written/, queries/pipelines/checks/).
materialized_at = {v:DateTime64(6, 'UTC')} AND ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
