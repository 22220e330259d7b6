-- The status readers see for one issue: the stored one with the derived rules applied (the `issue_list` view).
SELECT status
FROM issue_list(project_id = {project_id:UInt64})
WHERE issue_id = {issue_id:UInt64}
