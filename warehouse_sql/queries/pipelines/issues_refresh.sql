-- Rebuild the `issues` rows of every issue with an event received after {since}, from the insert-time states
-- (issue_rollup, issue_live_counters) of those issues only, and their distinct users from the count rows of
-- issue_users (kept just before by the same asset): the cost follows the issues touched, not their events.
-- An issue whose insert-time rows the `event_counters` asset corrected has elements arriving again after
-- {since} (its events' received_at stay as they were), so it is rebuilt too. A merge or a split names the
-- issues it regrouped ({project_id}, {issue_ids}); the asset names none.
INSERT INTO issues
WITH touched AS
(
    SELECT project_id, issue_id FROM issue_live_counters
    GROUP BY project_id, issue_id
    HAVING max(last_received) > {since:DateTime64(3, 'UTC')}
    UNION DISTINCT
    SELECT DISTINCT project_id, issue_id FROM issue_element_arrivals
    WHERE received_at > {since:DateTime64(3, 'UTC')}
    UNION DISTINCT
    SELECT DISTINCT project_id, issue_id FROM issue_live_counters
    WHERE project_id = {project_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
)
SELECT
    a.org_id, a.project_id, a.issue_id, a.issue_fingerprint, a.grouping_version, c.title,
    if(c.own.1 != '', c.own.2, a.culprit) AS culprit, a.level,
    a.platform, a.exception_type, a.first_seen, a.last_seen, c.last_received, c.events, u.users_affected,
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
        argMaxMerge(grouping_version) AS grouping_version,
        argMaxMerge(title) AS title,
        argMaxMerge(culprit) AS culprit,
        argMaxMerge(level) AS level,
        argMaxMerge(platform) AS platform,
        argMaxMerge(exception_type) AS exception_type,
        min(first_seen) AS first_seen,
        max(last_seen) AS last_seen,
        min(first_release).2 AS first_release,
        max(last_release).2 AS last_release,
        arraySort(groupUniqArrayArray(releases)) AS releases,
        arraySort(groupUniqArrayArray(environments)) AS environments,
        arraySort(groupUniqArrayArray(services)) AS services
    FROM issue_rollup
    WHERE (project_id, issue_id) IN touched
    GROUP BY project_id, issue_id
) AS a
INNER JOIN
(
    -- The title and culprit by the one rule (the latest own event's, stacklens/metrics/issue_figures.py), as the
    -- issue list view.
    SELECT project_id, issue_id, max(last_received) AS last_received, sum(events) AS events,
           ${issue_title} AS title, argMaxMerge(own_name) AS own
    FROM issue_live_counters
    WHERE (project_id, issue_id) IN touched
    GROUP BY project_id, issue_id
) AS c ON c.project_id = a.project_id AND c.issue_id = a.issue_id
LEFT JOIN
(
    SELECT k AS issue_id, toUInt64(sum(users)) AS users_affected FROM issue_users
    WHERE kind = 0 AND k IN (SELECT issue_id FROM touched)
    GROUP BY k
) AS u ON u.issue_id = a.issue_id
LEFT JOIN (SELECT project_id, issue_id, status FROM issue_state FINAL WHERE (project_id, issue_id) IN touched) AS s
    ON s.project_id = a.project_id AND s.issue_id = a.issue_id
SETTINGS join_use_nulls = 0
