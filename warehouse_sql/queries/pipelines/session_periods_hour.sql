-- Refresh the hours (grain 'hour') of `session_periods` in [{start}, {end}) by merging their minutes (grain
-- 'minute', refreshed just before by the same tick from the raw sessions): counts added, user states merged.
INSERT INTO session_periods
SELECT org_id, project_id, 'hour' AS hour_grain, toStartOfHour(start) AS hour, release, environment,
       sum(sessions), sum(errored), sum(crashed), sum(abnormal), min(first_started),
       uniqCombined64MergeState(12)(users), uniqCombined64MergeState(12)(errored_users),
       uniqCombined64MergeState(12)(crashed_users),
       {materialized_at:DateTime64(6, 'UTC')}
FROM session_periods FINAL
WHERE grain = 'minute'
  AND start >= {start:DateTime64(3, 'UTC')} AND start < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, hour, release, environment
