-- Refresh the capped element sets (issue_related_sets) of every issue with an event received after {since}:
-- per reason the issue's 10 most frequent elements (topK returns them most frequent first; the state keeps 20
-- so the first 10 are well estimated). Only sets that changed are written: a strength depends on the two sets
-- alone, so the relations of an issue whose sets stayed the same need no recomputation (the pairs step works on
-- the rows stamped {materialized_at}).
INSERT INTO issue_related_sets
WITH touched AS
(
    SELECT project_id, issue_id FROM issue_live_counters
    GROUP BY project_id, issue_id
    HAVING max(last_received) > {since:DateTime64(3, 'UTC')}
)
SELECT n.org_id, n.project_id, n.reason, n.issue_id, n.elements, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT any(org_id) AS org_id, project_id, toString(reason) AS reason, issue_id,
           arraySort(arraySlice(topKMerge(20)(top), 1, 10)) AS elements
    FROM issue_element_top
    WHERE (project_id, issue_id) IN touched
    GROUP BY project_id, reason, issue_id
) AS n
LEFT JOIN
(
    SELECT project_id, toString(reason) AS reason, issue_id, elements FROM issue_related_sets FINAL
    WHERE (project_id, issue_id) IN touched
) AS o ON o.project_id = n.project_id AND o.reason = n.reason AND o.issue_id = n.issue_id
WHERE n.elements != o.elements
SETTINGS join_use_nulls = 0
