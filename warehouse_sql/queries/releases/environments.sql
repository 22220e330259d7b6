-- The environments of the project's sessions within the retention (the day rows of `session_periods`), most
-- sessions first: what the release pages' environment filter offers beside the page loads' environments.
SELECT environment, sum(sessions) AS sessions
FROM session_periods FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day'
GROUP BY environment
ORDER BY sessions DESC, environment
SETTINGS ${view_settings}
