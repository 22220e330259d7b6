-- Make every issue's count equal to its members (after a rebuild from the events, which writes members only):
-- one correcting count row per issue whose count differs. FINAL folds a member written twice.
INSERT INTO issue_users (kind, k, issue_id, project_id, users)
SELECT 0, issue, issue, project, members - counted
FROM
(
    SELECT issue_id AS issue, any(project_id) AS project, toInt64(countIf(kind = 1)) AS members,
           sumIf(users, kind = 0) AS counted
    FROM issue_users FINAL
    GROUP BY issue_id
)
WHERE members != counted
