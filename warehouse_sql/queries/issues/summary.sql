-- One issue of one project, as the list shows it (live figures and status).
SELECT *
FROM issue_list(project_id = {project_id:UInt64})
WHERE org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
