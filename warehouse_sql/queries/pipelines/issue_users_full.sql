-- Add to issue_users every (issue, user) pair of the stored events it does not have yet, with the count
-- increments (the first run, or a run whose watermark is older than the arrivals kept). A large INSERT may land
-- in several blocks, so issue_users_repair follows it.
INSERT INTO issue_users (kind, k, issue_id, project_id, users)
WITH
    fresh AS
    (
        SELECT issue_id, any(project_id) AS project_id, cityHash64(issue_id, cityHash64(user_key)) AS member
        FROM events WHERE user_key != ''
        GROUP BY issue_id, member
    ),
    new AS
    (
        SELECT f.issue_id AS issue_id, any(f.project_id) AS project_id, groupArray(f.member) AS members
        FROM fresh AS f
        LEFT ANTI JOIN (SELECT k FROM issue_users WHERE kind = 1) AS u ON u.k = f.member
        GROUP BY f.issue_id
    )
SELECT r.1, r.2, issue_id, project_id, r.3
FROM new
ARRAY JOIN arrayConcat([(toUInt8(0), issue_id, toInt64(length(members)))],
                       arrayMap(m -> (toUInt8(1), m, toInt64(0)), members)) AS r
