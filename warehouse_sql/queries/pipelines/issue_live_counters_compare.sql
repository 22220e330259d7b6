-- Per issue with rows of a dead landing attempt ({dead}): the events stored (each event once) against the
-- events issue_live_counters counted. `in_flight`: the issue's rows of attempts that may still be landing
-- (macros/still_landing.sql); their view blocks may be on the way, so such an issue is left for the next run.
WITH touched AS
(
    SELECT DISTINCT project_id, fingerprint, issue_id FROM events
    WHERE (${dead_attempt_rows})
)
SELECT project_id, issue_id, sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, issue_id, uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted,
           countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, issue_id, event_id,
               (${still_landing}) AS landing
        FROM events
        WHERE (project_id, fingerprint) IN (SELECT project_id, fingerprint FROM touched)
    )
    GROUP BY project_id, issue_id
    UNION ALL
    SELECT project_id, issue_id, toUInt64(0), sum(events), toUInt64(0)
    FROM issue_live_counters
    WHERE (project_id, issue_id) IN (SELECT project_id, issue_id FROM touched)
    GROUP BY project_id, issue_id
)
GROUP BY project_id, issue_id
ORDER BY project_id, issue_id
