-- Per release of the project, the issues first seen in it (the `issues` mart's first release; environment does
-- not apply: an issue has one first release) — what the release list shows as new issues.
SELECT first_release AS release, count() AS new_issues
FROM issues FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release != ''
GROUP BY first_release
SETTINGS ${view_settings}
