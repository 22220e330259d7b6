-- Refresh the capped element sets (issue_related_sets) of every issue with an event received after {since}.
INSERT INTO issue_related_sets
WITH touched AS
(
    SELECT project_id, issue_id FROM issue_live_counters
    GROUP BY project_id, issue_id
    HAVING max(last_received) > {since:DateTime64(3, 'UTC')}
)
SELECT any(org_id), project_id, reason, issue_id, arraySort(topKMerge(20)(top)),
       {materialized_at:DateTime64(6, 'UTC')}
FROM issue_element_top
WHERE (project_id, issue_id) IN touched
GROUP BY project_id, reason, issue_id
