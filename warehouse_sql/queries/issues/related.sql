-- Issues related to one issue (mart related_issues), strongest first per reason, with their titles.
SELECT r.reason AS reason, r.related_issue_id AS related_issue_id, r.strength AS strength, r.shared AS shared,
       l.title AS title, l.culprit AS culprit, l.status AS status, l.events AS events
FROM
(
    SELECT reason, related_issue_id, strength, shared
    FROM related_issues FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
) AS r
INNER JOIN
(
    SELECT issue_id, title, culprit, status, events
    FROM issue_list(project_id = {project_id:UInt64})
    WHERE org_id = {org_id:UInt64}
) AS l ON l.issue_id = r.related_issue_id
ORDER BY reason, strength DESC, related_issue_id
LIMIT 10 BY reason
