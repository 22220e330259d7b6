-- The issues of one release: those first seen in it (`new`: the `issues` mart's first release) and those that
-- regressed in it (`regressed`: a status change to regressed that names the release, issue_history, with its last
-- such change). Two small reads; the issue list (releases/issues.sql) is then read for these issues only, and not
-- at all for a release without any (its view costs ~15 ms of planning on its own).
SELECT 'new' AS kind, issue_id, CAST(NULL AS Nullable(DateTime64(6, 'UTC'))) AS at
FROM issues FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release = {release:String}
UNION ALL
SELECT 'regressed' AS kind, issue_id, toNullable(max(at)) AS at
FROM issue_history
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND to_status = 'regressed'
  AND release = {release:String}
GROUP BY issue_id
