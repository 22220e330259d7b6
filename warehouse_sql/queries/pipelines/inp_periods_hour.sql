-- Refresh the hours (grain 'hour') of `inp_periods` in [{start}, {end}) from `inp_interactions` (refreshed just
-- before by the same tick): per hour, filter dimensions, page, target and type, the interactions' state rows
-- (macro inp_state_row) merged (macro inp_merge); the days merge these hours.
INSERT INTO inp_periods
SELECT org_id, project_id, 'hour' AS grain, toStartOfHour(ts) AS hour, environment, release, browser, page, target,
       type, ${inp_merge}, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, ts, environment, release, browser, page, target, type, ${inp_state_row}
    FROM inp_interactions FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
)
GROUP BY org_id, project_id, hour, environment, release, browser, page, target, type
