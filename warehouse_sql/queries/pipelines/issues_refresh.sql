-- Rebuild the `issues` rows of every issue with an event received after {since}.
INSERT INTO issues
SELECT
    a.org_id, a.project_id, a.issue_id, a.issue_fingerprint, a.grouping_version, a.title, a.culprit, a.level,
    a.platform, a.exception_type, a.first_seen, a.last_seen, a.last_received, a.events, a.users_affected,
    a.first_release, a.last_release, a.releases, a.environments, a.services,
    if(s.issue_id = 0, 'unresolved', toString(s.status)) AS status,
    {materialized_at:DateTime64(6, 'UTC')} AS materialized_at
FROM
(
    SELECT
        any(org_id) AS org_id,
        project_id,
        issue_id,
        any(fingerprint) AS issue_fingerprint,
        argMax(toString(grouping_version), timestamp) AS grouping_version,
        argMax(title, timestamp) AS title,
        argMax(if(culprit != '', culprit, in_app_frames[1]), timestamp) AS culprit,
        argMax(toString(level), timestamp) AS level,
        argMax(toString(platform), timestamp) AS platform,
        argMax(exception_type, timestamp) AS exception_type,
        min(timestamp) AS first_seen,
        max(timestamp) AS last_seen,
        max(received_at) AS last_received,
        uniqExact(event_id) AS events,
        uniqExactIf(user_key, user_key != '') AS users_affected,
        argMinIf(toString(release), timestamp, release != '') AS first_release,
        argMaxIf(toString(release), timestamp, release != '') AS last_release,
        arraySort(groupUniqArrayIf(toString(release), release != '')) AS releases,
        arraySort(groupUniqArrayIf(toString(environment), environment != '')) AS environments,
        arraySort(groupUniqArrayIf(toString(service), service != '')) AS services
    FROM events
    WHERE (project_id, fingerprint) IN
        (SELECT DISTINCT project_id, fingerprint FROM events WHERE received_at > {since:DateTime64(3, 'UTC')})
    GROUP BY project_id, issue_id
) AS a
LEFT JOIN (SELECT project_id, issue_id, status FROM issue_state FINAL) AS s
    ON s.project_id = a.project_id AND s.issue_id = a.issue_id
SETTINGS join_use_nulls = 0
