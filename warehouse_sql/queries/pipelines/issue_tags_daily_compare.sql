-- Per issue, day (UTC) and tag pair, for the issues and days with rows of a dead landing attempt ({dead}): the
-- events stored with the pair (each event once) against the events issue_tags_daily counted; `in_flight` as
-- in issue_live_counters_compare.
WITH touched AS
(
    SELECT DISTINCT org_id, project_id, fingerprint, issue_id, toDate(timestamp) AS day FROM events
    WHERE (${dead_attempt_rows})
)
SELECT project_id, issue_id, day, tag_key, tag_value,
       sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, issue_id, day, tag_key, tag_value,
           uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted, countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, issue_id, toDate(timestamp) AS day, toString(key) AS tag_key, value AS tag_value,
               event_id,
               (${still_landing}) AS landing
        FROM events
        ARRAY JOIN mapKeys(tags) AS key, mapValues(tags) AS value
        WHERE (project_id, fingerprint) IN (SELECT project_id, fingerprint FROM touched)
          AND (project_id, fingerprint, toDate(timestamp)) IN (SELECT project_id, fingerprint, day FROM touched)
    )
    GROUP BY project_id, issue_id, day, tag_key, tag_value
    UNION ALL
    SELECT project_id, issue_id, day, toString(tag_key), tag_value, toUInt64(0), sum(events), toUInt64(0)
    FROM issue_tags_daily
    WHERE (org_id, project_id) IN (SELECT org_id, project_id FROM touched)
      AND (project_id, issue_id, day) IN (SELECT project_id, issue_id, day FROM touched)
    GROUP BY project_id, issue_id, day, tag_key, tag_value
)
GROUP BY project_id, issue_id, day, tag_key, tag_value
ORDER BY project_id, issue_id, day, tag_key, tag_value
