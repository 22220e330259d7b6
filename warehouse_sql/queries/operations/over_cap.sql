-- An event cap's look before it deletes: how many of one project's stored error events are beyond its cap, the
-- newest `cap` kept per issue (`per_issue` = 1) or in the whole project (0). A re-landed event not merged yet is
-- one event (grouped by id), as every reader counts them. Ties on the time keep the larger id: the same rows
-- every run, so a run never removes an event the previous one kept.
SELECT count() AS rows
FROM
(
    SELECT row_number() OVER (PARTITION BY if({per_issue:UInt8} = 1, issue_id, 0) ORDER BY ts DESC, event_id DESC) AS newest
    FROM
    (
        SELECT issue_id, event_id, max(timestamp) AS ts
        FROM events
        WHERE project_id = {project_id:UInt64}
        GROUP BY issue_id, event_id
    )
)
WHERE newest > {cap:UInt64}
