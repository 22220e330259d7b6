-- Refresh the days (grain 'day') of `session_periods` holding the hours [{start}, {end}) by merging their hours
-- (grain 'hour', refreshed just before by the same tick) — of the releases and environments with sessions in those
-- hours only (their minute rows): another release's day is what it was, and writing it again would only add a
-- version of its user states for every read to skip until a merge drops it.
INSERT INTO session_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, release, environment,
       sum(sessions), sum(errored), sum(crashed), sum(abnormal), min(first_started),
       uniqCombined64MergeState(12)(users), uniqCombined64MergeState(12)(errored_users),
       uniqCombined64MergeState(12)(crashed_users),
       {materialized_at:DateTime64(6, 'UTC')}
FROM session_periods FINAL
WHERE ${hours_of_days}
  AND (project_id, org_id, release, environment) IN
      (SELECT project_id, org_id, release, environment FROM session_periods
       WHERE grain = 'minute' AND start >= {start:DateTime64(3, 'UTC')} AND start < {end:DateTime64(3, 'UTC')})
GROUP BY org_id, project_id, day, release, environment
