-- After a regroup cleared the users of the issues that lost or gained fingerprints, one member row per (issue,
-- user) of their stored events, then one count row per issue in the same block (the issue_users asset's two
-- kinds, stacklens/issues/merges.py): the issues mart reads an issue's users from these.
INSERT INTO issue_users (kind, k, issue_id, project_id, users)
WITH members AS
(
    SELECT issue_id, any(project_id) AS project, groupUniqArray(cityHash64(issue_id, cityHash64(user_key))) AS keys
    FROM events
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
      AND user_key != ''
    GROUP BY issue_id
)
SELECT r.1, r.2, issue_id, project, r.3
FROM members
ARRAY JOIN arrayConcat([(toUInt8(0), issue_id, toInt64(length(keys)))],
                       arrayMap(m -> (toUInt8(1), m, toInt64(0)), keys)) AS r
