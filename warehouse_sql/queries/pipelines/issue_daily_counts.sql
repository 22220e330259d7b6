-- Rebuild `issue_daily_counts` for the days in [{start}, {end}) from the insert-time states
-- (issue_daily_states: one row per issue and day), so a day costs its issues, not its events.
INSERT INTO issue_daily_counts
SELECT
    any(org_id), project_id, issue_id, day, sum(events), uniqExactMerge(users),
    {materialized_at:DateTime64(6, 'UTC')}
FROM issue_daily_states
WHERE day >= toDate({start:DateTime64(3, 'UTC')}) AND day < toDate({end:DateTime64(3, 'UTC')})
GROUP BY project_id, issue_id, day
