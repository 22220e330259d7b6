-- Relations of every issue with an event received after {since}, in both directions.
-- strength = Jaccard |A ∩ B| / |A ∪ B| of the two issues' element sets for the reason; elements shared by
-- more than 50 issues (a busy 5-minute window, a frame like main()) carry no signal and are skipped, which
-- also bounds the pairs a tick can produce.
INSERT INTO related_issues
WITH
    touched AS (SELECT DISTINCT project_id, issue_id FROM events WHERE received_at > {since:DateTime64(3, 'UTC')}),
    mine AS
    (
        SELECT DISTINCT project_id, reason, element, issue_id FROM issue_elements
        WHERE (project_id, issue_id) IN touched
    ),
    shared_elements AS
    (
        SELECT DISTINCT project_id, reason, element, issue_id FROM issue_elements
        WHERE (project_id, reason, element) IN (SELECT project_id, reason, element FROM mine)
    ),
    useful AS
    (
        SELECT project_id, reason, element FROM shared_elements
        GROUP BY project_id, reason, element HAVING count() BETWEEN 2 AND 50
    ),
    pairs AS
    (
        SELECT a.project_id AS project_id, a.reason AS reason, a.issue_id AS issue_id,
               b.issue_id AS related_issue_id, count() AS shared
        FROM (SELECT * FROM mine WHERE (project_id, reason, element) IN useful) AS a
        INNER JOIN (SELECT * FROM shared_elements WHERE (project_id, reason, element) IN useful) AS b
            ON a.project_id = b.project_id AND a.reason = b.reason AND a.element = b.element
        WHERE a.issue_id != b.issue_id
        GROUP BY project_id, reason, issue_id, related_issue_id
    ),
    sizes AS
    (
        SELECT project_id, reason, issue_id, uniqExact(element) AS n, any(org_id) AS org_id FROM issue_elements
        WHERE issue_id IN (SELECT issue_id FROM pairs UNION DISTINCT SELECT related_issue_id FROM pairs)
        GROUP BY project_id, reason, issue_id
    ),
    scored AS
    (
        SELECT sa.org_id AS org_id, p.project_id AS project_id, p.issue_id AS issue_id,
               p.related_issue_id AS related_issue_id, p.reason AS reason,
               p.shared / (sa.n + sb.n - p.shared) AS strength, p.shared AS shared
        FROM pairs AS p
        INNER JOIN sizes AS sa ON sa.project_id = p.project_id AND sa.reason = p.reason AND sa.issue_id = p.issue_id
        INNER JOIN sizes AS sb
            ON sb.project_id = p.project_id AND sb.reason = p.reason AND sb.issue_id = p.related_issue_id
    )
SELECT org_id, project_id, x.1, x.2, reason, strength, shared, {materialized_at:DateTime64(6, 'UTC')}
FROM scored
ARRAY JOIN [(issue_id, related_issue_id), (related_issue_id, issue_id)] AS x
