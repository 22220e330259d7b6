-- Whether a release of the project was ever seen within the retention, whatever the window: a session (day rows of
-- `session_periods`), a page load (day rows of `pageload_periods`) or an error event (`release_error_counts`).
SELECT (SELECT count() FROM session_periods
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day'
          AND release = {release:String})
     + (SELECT count() FROM pageload_periods
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day'
          AND release = {release:String})
     + (SELECT count() FROM release_error_counts
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND release = {release:String})
       AS seen
