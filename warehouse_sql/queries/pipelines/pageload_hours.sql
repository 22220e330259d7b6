-- Refresh `pageload_hours` for the hours in [{start}, {end}) from `pageload_facts` (refreshed just before by the
-- same tick): per hour, filter dimensions and page, the page loads' state rows (macro pageload_state_row) merged.
INSERT INTO pageload_hours
SELECT org_id, project_id, toStartOfHour(first_ts) AS hour, environment, release, browser, page,
       ${pageload_merge},
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, environment, release, browser, page,
           ${pageload_state_row}
    FROM pageload_facts FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
)
GROUP BY org_id, project_id, hour, environment, release, browser, page
