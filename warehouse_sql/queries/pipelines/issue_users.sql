-- Add to issue_users the users (cityHash64 of the user key) of the events whose elements arrived after {since}
-- that their issue does not have yet, with each issue's count increment, in one INSERT (one block: the member
-- rows and the count row of an issue land together). The lookup reads only the granules holding the new keys;
-- re-reading the watermark overlap adds nothing twice.
INSERT INTO issue_users (kind, k, issue_id, project_id, users)
WITH
    fresh AS
    (
        SELECT issue_id, any(project_id) AS project_id, cityHash64(issue_id, element) AS member
        FROM issue_element_arrivals
        WHERE received_at > {since:DateTime64(3, 'UTC')} AND reason = 'same_user'
        GROUP BY issue_id, member
    ),
    new AS
    (
        SELECT issue_id, any(project_id) AS project_id, groupArray(member) AS members FROM fresh
        WHERE member NOT IN (SELECT k FROM issue_users WHERE kind = 1 AND k IN (SELECT member FROM fresh))
        GROUP BY issue_id
    )
SELECT r.1, r.2, issue_id, project_id, r.3
FROM new
ARRAY JOIN arrayConcat([(toUInt8(0), issue_id, toInt64(length(members)))],
                       arrayMap(m -> (toUInt8(1), m, toInt64(0)), members)) AS r
