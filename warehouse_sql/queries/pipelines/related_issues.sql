-- Relations of the sketches the run just changed (issue_sketches rows stamped {materialized_at}), written as a
-- difference against what related_issues holds: a relation that is new or whose figures changed gets a row,
-- one that no longer holds gets a tombstone (is_deleted = 1), one that stayed the same is not written.
-- Both directions. Candidates come from the inverted index hash → issues over every sketch of the same
-- project and reason; a hash found in more than 50 sketches (a busy 5-minute window, a frame like main(), a
-- release every issue has) carries no signal and is skipped, which also bounds the pairs per issue.
-- strength: both sets complete (fewer than 10 elements each) → the exact Jaccard index |A ∩ B| / |A ∪ B|;
-- otherwise the bottom-10 MinHash estimate of it: of the 10 smallest hashes of A ∪ B (taken from the two
-- sketches), the share found in both. shared = hashes the two sketches have in common (|A ∩ B| when complete).
INSERT INTO related_issues
WITH
    changed AS
    (
        SELECT project_id, reason, issue_id FROM issue_sketches
        WHERE materialized_at = {materialized_at:DateTime64(6, 'UTC')}
    ),
    sketches AS
    (
        SELECT org_id, project_id, reason, issue_id, hashes FROM issue_sketches FINAL
        WHERE (project_id, reason) IN (SELECT DISTINCT project_id, reason FROM changed)
    ),
    postings AS
    (
        SELECT project_id, reason, h, groupArray(issue_id) AS issues
        FROM sketches ARRAY JOIN hashes AS h
        GROUP BY project_id, reason, h
        HAVING count() BETWEEN 2 AND 50
    ),
    pairs AS
    (
        SELECT DISTINCT m.project_id AS project_id, m.reason AS reason,
               least(m.issue_id, other) AS a, greatest(m.issue_id, other) AS b
        FROM
        (
            SELECT project_id, reason, issue_id, h FROM sketches ARRAY JOIN hashes AS h
            WHERE (project_id, reason, issue_id) IN changed
        ) AS m
        INNER JOIN postings AS p ON p.project_id = m.project_id AND p.reason = m.reason AND p.h = m.h
        ARRAY JOIN p.issues AS other
        WHERE other != m.issue_id
    ),
    fresh AS
    (
        SELECT p.project_id AS project_id, toString(p.reason) AS reason, p.a AS a, p.b AS b, sa.org_id AS org_id,
               arrayIntersect(sa.hashes, sb.hashes) AS common,
               if(length(sa.hashes) < 10 AND length(sb.hashes) < 10,
                  length(common) / (length(sa.hashes) + length(sb.hashes) - length(common)),
                  arrayCount(x -> has(common, x),
                             arraySlice(arraySort(arrayDistinct(arrayConcat(sa.hashes, sb.hashes))), 1, 10)) / 10
               ) AS strength,
               toUInt64(length(common)) AS shared
        FROM pairs AS p
        INNER JOIN sketches AS sa ON sa.project_id = p.project_id AND sa.reason = p.reason AND sa.issue_id = p.a
        INNER JOIN sketches AS sb ON sb.project_id = p.project_id AND sb.reason = p.reason AND sb.issue_id = p.b
        WHERE strength > 0
    ),
    previous AS
    (
        -- The current relations of the changed sketches' issues (newest row per key, tombstones dropped); the
        -- (project_id, issue_id) filter lets the primary key skip every other issue.
        SELECT DISTINCT project_id, reason, least(issue_id, related_issue_id) AS a,
               greatest(issue_id, related_issue_id) AS b, o_org AS org_id, o_strength AS strength,
               o_shared AS shared
        FROM
        (
            SELECT project_id, toString(reason) AS reason, issue_id, related_issue_id,
                   argMax(tuple(org_id, strength, shared, is_deleted), materialized_at) AS newest,
                   tupleElement(newest, 1) AS o_org, tupleElement(newest, 2) AS o_strength,
                   tupleElement(newest, 3) AS o_shared
            FROM related_issues
            WHERE (project_id, issue_id) IN (SELECT project_id, issue_id FROM changed)
              AND (project_id, reason, issue_id) IN changed
            GROUP BY project_id, reason, issue_id, related_issue_id
            HAVING tupleElement(newest, 4) = 0
        )
    ),
    diff AS
    (
        SELECT if(f.hit, f.project_id, o.project_id) AS project_id, if(f.hit, f.reason, o.reason) AS reason,
               if(f.hit, f.a, o.a) AS a, if(f.hit, f.b, o.b) AS b, if(f.hit, f.org_id, o.org_id) AS org_id,
               f.strength AS strength, f.shared AS shared, NOT f.hit AS gone
        FROM (SELECT *, true AS hit FROM fresh) AS f
        FULL OUTER JOIN (SELECT *, true AS hit FROM previous) AS o
            ON o.project_id = f.project_id AND o.reason = f.reason AND o.a = f.a AND o.b = f.b
        WHERE NOT (f.hit AND o.hit AND f.strength = o.strength AND f.shared = o.shared)
        SETTINGS join_use_nulls = 0
    )
SELECT org_id, project_id, x.1, x.2, reason, if(gone, 0, strength), if(gone, 0, shared),
       {materialized_at:DateTime64(6, 'UTC')}, toUInt8(gone)
FROM diff
ARRAY JOIN [(a, b), (b, a)] AS x
