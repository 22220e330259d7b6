-- Per issue with rows of a dead landing attempt ({dead}): the events stored (each event once) against the
-- events issue_live_counters counted. `in_flight`: the issue's rows of attempts that may still be landing
-- (received after {young}, neither finished nor dead: not in {settled}); their view blocks may be on the way,
-- so such an issue is left for the next run.
WITH touched AS
(
    SELECT DISTINCT project_id, fingerprint, issue_id FROM events
    WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
      AND (org_id, batch_id, received_at) IN {dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
)
SELECT project_id, issue_id, sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, issue_id, uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted,
           countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, issue_id, event_id,
               received_at > {young:DateTime64(3, 'UTC')} AND batch_id != ''
               AND (org_id, batch_id, received_at) NOT IN {settled:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
               AS landing
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
