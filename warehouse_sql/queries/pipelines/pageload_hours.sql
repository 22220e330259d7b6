-- Refresh `pageload_hours` for the hours in [{start}, {end}) from `pageload_facts` (refreshed just before by the
-- same tick): per hour, filter dimensions and page, the aggregates of the pageload_states macro.
INSERT INTO pageload_hours
SELECT org_id, project_id, toStartOfHour(ts) AS hour, environment, release, browser, page,
       ${pageload_states},
       {materialized_at:DateTime64(6, 'UTC')}
FROM pageload_facts FINAL
WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, hour, environment, release, browser, page
