-- Add to issue_users every (issue, user) pair of the stored events it does not have yet (the first run, or a run
-- whose watermark is older than the arrivals kept).
INSERT INTO issue_users
SELECT e.project_id, e.issue_id, e.user_hash
FROM (SELECT DISTINCT project_id, issue_id, cityHash64(user_key) AS user_hash FROM events WHERE user_key != '') AS e
LEFT ANTI JOIN issue_users AS u
    ON u.project_id = e.project_id AND u.issue_id = e.issue_id AND u.user_hash = e.user_hash
