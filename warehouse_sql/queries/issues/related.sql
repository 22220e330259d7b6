-- Issues related to one issue (mart related_issues), strongest first per reason, with their titles and what
-- else each shares (`also`: the other reasons). A shared release alone says little (every issue of a busy
-- release shares it), so "same release" keeps the issues that share the release and something more: a user,
-- a 5-minute window or an in-app frame. At most ten per reason.
SELECT r.reason AS reason, r.related_issue_id AS related_issue_id, r.strength AS strength, r.shared AS shared,
       l.title AS title, l.culprit AS culprit, l.status AS status, l.events AS events,
       arraySort(arrayFilter(x -> x != r.reason, o.reasons)) AS also
FROM
(
    SELECT reason, related_issue_id, strength, shared
    FROM related_issues FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
) AS r
INNER JOIN
(
    SELECT related_issue_id, groupArray(reason) AS reasons
    FROM related_issues FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id = {issue_id:UInt64}
    GROUP BY related_issue_id
) AS o ON o.related_issue_id = r.related_issue_id
INNER JOIN
(
    SELECT issue_id, title, culprit, status, events
    FROM issue_list(project_id = {project_id:UInt64})
    WHERE org_id = {org_id:UInt64}
) AS l ON l.issue_id = r.related_issue_id
WHERE r.reason != 'same_release' OR length(o.reasons) > 1
ORDER BY reason, strength DESC, related_issue_id
LIMIT 10 BY reason
