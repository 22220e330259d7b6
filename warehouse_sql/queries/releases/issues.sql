-- The issues of one release: those first seen in it (`new`) and those that regressed in it (`regressed`: a status
-- change to regressed that names the release, issue_history), with the live title, status and counters of the
-- issue list; the most frequent first, 50 of each at most. The issue list is read for these issues only.
WITH picked AS
(
    SELECT 'new' AS kind, issue_id, CAST(NULL AS Nullable(DateTime64(6, 'UTC'))) AS at
    FROM issues FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release = {release:String}
    UNION ALL
    SELECT 'regressed' AS kind, issue_id, toNullable(max(at)) AS at
    FROM issue_history
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND to_status = 'regressed'
      AND release = {release:String}
    GROUP BY issue_id
)
SELECT kind, l.issue_id AS issue_id, l.title AS title, l.culprit AS culprit, l.level AS level, l.status AS status,
       l.events AS events, l.users_affected AS users, l.first_seen AS first_seen, l.last_seen AS last_seen,
       picked.at AS at
FROM picked
INNER JOIN
(
    SELECT issue_id, title, culprit, level, status, events, users_affected, first_seen, last_seen
    FROM issue_list(project_id = {project_id:UInt64})
    WHERE org_id = {org_id:UInt64} AND issue_id IN (SELECT issue_id FROM picked)
) AS l ON l.issue_id = picked.issue_id
ORDER BY kind, l.events DESC, l.issue_id
LIMIT 50 BY kind
