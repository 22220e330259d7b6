-- Refresh the blocks of 2, 4, 8 and 16 days (grains 'days_2' … 'days_16', each starting on a multiple of its days
-- since 1970-01-01) of `session_periods` that hold the days of the hours [{start}, {end}), by merging their days
-- (grain 'day', refreshed just before by the same tick): a 90-day window reads a few blocks, not 90 days. The days
-- read are those of the 16-day blocks around the range, so every smaller block in it is whole; and only those of
-- the releases and environments with sessions in the hours (their minute rows): the blocks of the others are what
-- they were. Writing them again (every tick, the ~20 releases of a 16-day block, four grains) only added versions
-- of their user states, which every read under FINAL deserialised until a merge dropped them.
INSERT INTO session_periods
SELECT org_id, project_id, ${block_period}, release, environment,
       sum(sessions), sum(errored), sum(crashed), sum(abnormal), min(first_started),
       uniqCombined64MergeState(12)(users), uniqCombined64MergeState(12)(errored_users),
       uniqCombined64MergeState(12)(crashed_users),
       {materialized_at:DateTime64(6, 'UTC')}
FROM session_periods FINAL
${days_of_blocks}
  AND (project_id, org_id, release, environment) IN
      (SELECT project_id, org_id, release, environment FROM session_periods
       WHERE grain = 'minute' AND start >= {start:DateTime64(3, 'UTC')} AND start < {end:DateTime64(3, 'UTC')})
GROUP BY org_id, project_id, block_grain, block, release, environment
