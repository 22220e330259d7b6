-- The releases of the organization's projects first seen in [since, until): per project and release the earliest
-- of its first session start (session_periods day rows), first page load (pageload_periods day rows) and first
-- issue (the issues mart's first_release), within the retention — what the release pages call first seen. The
-- markers of the time charts (stacklens/markers.py) read it; environment '' = any.
SELECT project_id, release, min(first) AS first_seen
FROM
(
    SELECT project_id, toString(release) AS release, min(first_started) AS first
    FROM session_periods
    WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)} AND grain = 'day'
      AND release != '' AND ({environment:String} = '' OR environment = {environment:String})
    GROUP BY project_id, release
    UNION ALL
    SELECT project_id, toString(release), min(first_ts)
    FROM pageload_periods
    WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)} AND grain = 'day'
      AND release != '' AND ({environment:String} = '' OR environment = {environment:String})
    GROUP BY project_id, release
    UNION ALL
    SELECT project_id, first_release, min(first_seen)
    FROM issues FINAL
    WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)} AND first_release != ''
    GROUP BY project_id, first_release
)
GROUP BY project_id, release
HAVING first_seen >= {since:DateTime64(3, 'UTC')} AND first_seen < {until:DateTime64(3, 'UTC')}
ORDER BY first_seen, release
LIMIT 1000
SETTINGS ${view_settings}
