-- Per release with rows of a dead landing attempt ({dead}): the error events stored with it (each event once)
-- against the events release_error_counts counted; `in_flight` as in issue_live_counters_compare.
WITH touched AS
(
    SELECT DISTINCT project_id, toString(release) AS release FROM events
    WHERE (${dead_attempt_rows})
      AND release != ''
)
SELECT project_id, release, sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, release, uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted,
           countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, toString(release) AS release, event_id,
               (${still_landing}) AS landing
        FROM events
        WHERE project_id IN (SELECT project_id FROM touched)
          AND (project_id, toString(release)) IN touched
    )
    GROUP BY project_id, release
    UNION ALL
    SELECT project_id, release, toUInt64(0), sum(events), toUInt64(0)
    FROM release_error_counts
    WHERE (project_id, release) IN touched
    GROUP BY project_id, release
)
GROUP BY project_id, release
ORDER BY project_id, release
