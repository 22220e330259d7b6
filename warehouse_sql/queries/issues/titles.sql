-- Titles of a few issues of one project (the share-link list names issues, not ids).
SELECT issue_id, title
FROM issue_list(project_id = {project_id:UInt64})
WHERE org_id = {org_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
