-- Per issue and day (UTC) with rows of a dead landing attempt ({dead}): the events stored (each event once)
-- against the events issue_totals_daily counted; `in_flight` as in issue_live_counters_compare.
WITH touched AS
(
    SELECT DISTINCT org_id, project_id, fingerprint, issue_id, toDate(timestamp) AS day FROM events
    WHERE (${dead_attempt_rows})
)
SELECT project_id, issue_id, day, sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, issue_id, day, uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted,
           countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, issue_id, toDate(timestamp) AS day, event_id,
               (${still_landing}) AS landing
        FROM events
        WHERE (project_id, fingerprint) IN (SELECT project_id, fingerprint FROM touched)
          AND (project_id, fingerprint, toDate(timestamp)) IN (SELECT project_id, fingerprint, day FROM touched)
    )
    GROUP BY project_id, issue_id, day
    UNION ALL
    SELECT project_id, issue_id, day, toUInt64(0), sum(events), toUInt64(0)
    FROM issue_totals_daily
    WHERE (org_id, project_id, day, issue_id) IN (SELECT org_id, project_id, day, issue_id FROM touched)
    GROUP BY project_id, issue_id, day
)
GROUP BY project_id, issue_id, day
ORDER BY project_id, issue_id, day
