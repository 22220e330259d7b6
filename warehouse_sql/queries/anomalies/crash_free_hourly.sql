-- An anomaly rule's `crash_free_sessions` series (stacklens/anomalies/series.py): per hour of [since, until), the
-- project's sessions and crashed sessions from the hour rows of the session states `session_periods`, the states
-- the release pages and the crash-free rate rules read. Environment '' = any.
SELECT start AS hour, sum(sessions) AS sessions, sum(crashed) AS crashed
FROM session_periods FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'hour'
  AND start >= {since:DateTime('UTC')} AND start < {until:DateTime('UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
GROUP BY hour
ORDER BY hour
SETTINGS ${view_settings}
