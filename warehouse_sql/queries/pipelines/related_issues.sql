-- Relations of the issues whose sets the run just refreshed (issue_related_sets rows stamped
-- {materialized_at}), in both directions. Candidates come from the inverted index element → issues over every
-- issue's capped set; an element found in more than 50 issues' sets (a busy 5-minute window, a frame like
-- main()) carries no signal and is skipped, which also bounds the pairs per issue.
-- strength = Jaccard |A ∩ B| / |A ∪ B| of the two capped sets; shared = |A ∩ B|.
-- Every relation the touched issues had before is first written as a tombstone (is_deleted = 1, one
-- microsecond older), so a relation that no longer holds disappears under FINAL and one that holds is replaced.
INSERT INTO related_issues
WITH
    touched AS
    (
        SELECT DISTINCT project_id, issue_id FROM issue_related_sets
        WHERE materialized_at = {materialized_at:DateTime64(6, 'UTC')}
    ),
    sets AS
    (
        SELECT org_id, project_id, reason, issue_id, elements FROM issue_related_sets FINAL
        WHERE project_id IN (SELECT project_id FROM touched)
    ),
    postings AS
    (
        SELECT project_id, reason, element, groupArray(issue_id) AS issues
        FROM sets ARRAY JOIN elements AS element
        GROUP BY project_id, reason, element
        HAVING count() BETWEEN 2 AND 50
    ),
    mine AS
    (
        SELECT project_id, reason, issue_id, element
        FROM sets ARRAY JOIN elements AS element
        WHERE (project_id, issue_id) IN touched
    ),
    pairs AS
    (
        SELECT m.project_id AS project_id, m.reason AS reason, m.issue_id AS issue_id,
               other AS related_issue_id, count() AS shared
        FROM mine AS m
        INNER JOIN postings AS p ON p.project_id = m.project_id AND p.reason = m.reason AND p.element = m.element
        ARRAY JOIN p.issues AS other
        WHERE other != m.issue_id
        GROUP BY project_id, reason, issue_id, related_issue_id
    ),
    sizes AS (SELECT org_id, project_id, reason, issue_id, length(elements) AS n FROM sets),
    scored AS
    (
        SELECT sa.org_id AS org_id, p.project_id AS project_id, p.issue_id AS issue_id,
               p.related_issue_id AS related_issue_id, toString(p.reason) AS reason,
               p.shared / (sa.n + sb.n - p.shared) AS strength, p.shared AS shared
        FROM pairs AS p
        INNER JOIN sizes AS sa ON sa.project_id = p.project_id AND sa.reason = p.reason AND sa.issue_id = p.issue_id
        INNER JOIN sizes AS sb
            ON sb.project_id = p.project_id AND sb.reason = p.reason AND sb.issue_id = p.related_issue_id
    ),
    previous AS
    (
        SELECT org_id, project_id, issue_id, related_issue_id, toString(reason) AS reason FROM related_issues FINAL
        WHERE (project_id, issue_id) IN touched
    )
SELECT org_id, project_id, x.1, x.2, reason, toFloat64(0), toUInt64(0),
       {materialized_at:DateTime64(6, 'UTC')} - toIntervalMicrosecond(1), toUInt8(1)
FROM previous
ARRAY JOIN [(issue_id, related_issue_id), (related_issue_id, issue_id)] AS x
UNION ALL
SELECT org_id, project_id, x.1, x.2, reason, toFloat64(strength), toUInt64(shared),
       {materialized_at:DateTime64(6, 'UTC')}, toUInt8(0)
FROM scored
ARRAY JOIN [(issue_id, related_issue_id), (related_issue_id, issue_id)] AS x
