-- Rebuild `issue_daily_counts` for the days in [{start}, {end}).
INSERT INTO issue_daily_counts
SELECT
    any(org_id), project_id, issue_id, toDate(timestamp) AS day,
    uniqExact(event_id), uniqExactIf(user_key, user_key != ''),
    {materialized_at:DateTime64(6, 'UTC')}
FROM events
WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
GROUP BY project_id, issue_id, day
