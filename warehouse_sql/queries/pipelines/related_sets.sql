-- Refresh the capped element sets (issue_related_sets) of every issue with an event received after {since}:
-- per reason the issue's 10 most frequent elements (topK returns them most frequent first; the state keeps 20
-- so the first 10 are well estimated).
INSERT INTO issue_related_sets
WITH touched AS
(
    SELECT project_id, issue_id FROM issue_live_counters
    GROUP BY project_id, issue_id
    HAVING max(last_received) > {since:DateTime64(3, 'UTC')}
)
SELECT any(org_id), project_id, reason, issue_id, arraySort(arraySlice(topKMerge(20)(top), 1, 10)),
       {materialized_at:DateTime64(6, 'UTC')}
FROM issue_element_top
WHERE (project_id, issue_id) IN touched
GROUP BY project_id, reason, issue_id
