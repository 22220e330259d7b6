-- Add to issue_users the users (cityHash64 of the user key) of the events whose elements arrived after {since}
-- and that the issue does not have yet: the lookup reads only the granules holding those keys, so the table
-- stays free of duplicates and a plain count() per issue is its distinct users. Re-reading the watermark
-- overlap adds nothing twice.
INSERT INTO issue_users
WITH fresh AS
(
    SELECT DISTINCT project_id, issue_id, element AS user_hash FROM issue_element_arrivals
    WHERE received_at > {since:DateTime64(3, 'UTC')} AND reason = 'same_user'
)
SELECT project_id, issue_id, user_hash FROM fresh
WHERE (project_id, issue_id, user_hash) NOT IN
(
    SELECT project_id, issue_id, user_hash FROM issue_users
    WHERE (project_id, issue_id, user_hash) IN (SELECT project_id, issue_id, user_hash FROM fresh)
)
