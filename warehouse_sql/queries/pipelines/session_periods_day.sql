-- Refresh the days (grain 'day') of `session_periods` holding the hours [{start}, {end}) by merging their hours
-- (grain 'hour', refreshed just before by the same tick).
INSERT INTO session_periods
SELECT org_id, project_id, 'day' AS day_grain, toStartOfDay(start) AS day, release, environment,
       sum(sessions), sum(errored), sum(crashed), sum(abnormal), min(first_started),
       uniqCombined64MergeState(12)(users), uniqCombined64MergeState(12)(errored_users),
       uniqCombined64MergeState(12)(crashed_users),
       {materialized_at:DateTime64(6, 'UTC')}
FROM session_periods FINAL
WHERE grain = 'hour' AND start >= toStartOfDay({start:DateTime64(3, 'UTC')})
  AND start < toStartOfDay({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND) + INTERVAL 1 DAY
GROUP BY org_id, project_id, day, release, environment
