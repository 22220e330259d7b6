-- Per issue, day (UTC), environment, release, level and service, for the issues and days with rows of a dead
-- landing attempt ({dead}): the events stored (each event once) against the events issue_facets_daily
-- counted; `in_flight` as in issue_live_counters_compare.
WITH touched AS
(
    SELECT DISTINCT org_id, project_id, fingerprint, issue_id, toDate(timestamp) AS day FROM events
    WHERE (${dead_attempt_rows})
)
SELECT project_id, issue_id, day, environment, release, level, service,
       sum(stored) AS stored, sum(counted) AS counted, sum(in_flight) AS in_flight
FROM
(
    SELECT project_id, issue_id, day, environment, release, level, service,
           uniqExactIf(event_id, NOT landing) AS stored, toUInt64(0) AS counted, countIf(landing) AS in_flight
    FROM
    (
        SELECT project_id, issue_id, toDate(timestamp) AS day, toString(environment) AS environment,
               toString(release) AS release, toString(level) AS level, toString(service) AS service, event_id,
               (${still_landing}) AS landing
        FROM events
        WHERE (project_id, fingerprint) IN (SELECT project_id, fingerprint FROM touched)
          AND (project_id, fingerprint, toDate(timestamp)) IN (SELECT project_id, fingerprint, day FROM touched)
    )
    GROUP BY project_id, issue_id, day, environment, release, level, service
    UNION ALL
    SELECT project_id, issue_id, day, toString(environment), toString(release), toString(level),
           toString(service), toUInt64(0), sum(events), toUInt64(0)
    FROM issue_facets_daily
    WHERE (org_id, project_id, issue_id, day) IN (SELECT org_id, project_id, issue_id, day FROM touched)
    GROUP BY project_id, issue_id, day, environment, release, level, service
)
GROUP BY project_id, issue_id, day, environment, release, level, service
ORDER BY project_id, issue_id, day, environment, release, level, service
