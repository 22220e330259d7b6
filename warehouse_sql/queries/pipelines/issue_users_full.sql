-- Add to issue_users a member row for every (issue, user) pair of the stored events it does not have yet (the
-- first run, or a run whose watermark is older than the arrivals kept); issue_users_repair then brings every
-- count to its members (a large INSERT lands in several blocks, so counts are not written alongside here).
INSERT INTO issue_users (kind, k, issue_id, project_id, users)
SELECT 1, f.member, f.issue_id, f.project_id, 0
FROM
(
    SELECT issue_id, any(project_id) AS project_id, cityHash64(issue_id, cityHash64(user_key)) AS member
    FROM events WHERE user_key != ''
    GROUP BY issue_id, member
) AS f
LEFT ANTI JOIN (SELECT k FROM issue_users WHERE kind = 1) AS u ON u.k = f.member
