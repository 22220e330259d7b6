-- An event cap: one project's error events beyond the newest `cap` per issue (`per_issue` = 1) or in the whole
-- project (0), oldest first, deleted by a mutation run to its end (mutations_sync) so the disk is freed, as the
-- retention run's delete_before. The rows chosen are over_cap.sql's. Only `events`: the counters (issue list,
-- daily counts, release errors) are insert-time tables and keep counting every event received.
ALTER TABLE events
DELETE WHERE project_id = {project_id:UInt64} AND (issue_id, event_id) IN
(
    SELECT issue_id, event_id
    FROM
    (
        SELECT
            issue_id,
            event_id,
            row_number() OVER (PARTITION BY if({per_issue:UInt8} = 1, issue_id, 0) ORDER BY ts DESC, event_id DESC) AS newest
        FROM
        (
            SELECT issue_id, event_id, max(timestamp) AS ts
            FROM events
            WHERE project_id = {project_id:UInt64}
            GROUP BY issue_id, event_id
        )
    )
    WHERE newest > {cap:UInt64}
)
