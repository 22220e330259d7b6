-- Per release of the project (and environment; '' = any), its first session start within the retention: the
-- earliest of its day rows in `session_periods` (every day with sessions has one; no user state is read). Whatever
-- the window, so a window does not reorder the releases that began before it.
SELECT release, min(first_started) AS first_seen
FROM session_periods
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day'
  AND ({environment:String} = '' OR environment = {environment:String})
GROUP BY release
SETTINGS ${view_settings}
