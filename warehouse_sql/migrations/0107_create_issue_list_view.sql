-- The issue list as readers see it, for one project: `SELECT … FROM issue_list(project_id = 42)`.
-- Counters come from issue_live_counters (fresh at insert), the descriptive columns from the `issues` mart
-- (falling back to the live latest values for an issue the mart has not seen yet), and the status from the
-- live issue_state, with the derived states applied at read time:
--   resolved + an event received after the change                      -> regressed
--   resolved_next_release + an event after the change in another release -> regressed
--   ignored + ignore_until_events more events, or ignore_until passed   -> unresolved
-- The `issues` asset writes those derived changes (with history rows) on its next tick.
CREATE VIEW IF NOT EXISTS issue_list AS
SELECT
    l.org_id AS org_id,
    l.project_id AS project_id,
    l.issue_id AS issue_id,
    m.fingerprint AS fingerprint,
    if(m.title != '', m.title, l.title) AS title,
    if(m.issue_id != 0, m.culprit, l.culprit) AS culprit,
    if(m.issue_id != 0, toString(m.level), l.level) AS level,
    if(m.issue_id != 0, toString(m.platform), l.platform) AS platform,
    m.exception_type AS exception_type,
    l.first_seen AS first_seen,
    l.last_seen AS last_seen,
    l.last_received AS last_received,
    l.events AS events,
    l.users_affected AS users_affected,
    m.first_release AS first_release,
    if(l.last_release != '', l.last_release, m.last_release) AS last_release,
    m.environments AS environments,
    m.services AS services,
    if(s.issue_id = 0, 'unresolved', toString(s.status)) AS stored_status,
    multiIf(
        s.issue_id = 0, 'unresolved',
        s.status = 'resolved' AND l.last_received > s.changed_at, 'regressed',
        s.status = 'resolved_next_release' AND l.last_received > s.changed_at
            AND l.last_release != '' AND l.last_release != s.resolved_release, 'regressed',
        s.status = 'ignored' AND s.ignore_until_events > 0
            AND l.events >= s.ignore_events_baseline + s.ignore_until_events, 'unresolved',
        s.status = 'ignored' AND s.ignore_until IS NOT NULL AND now64(3) >= s.ignore_until, 'unresolved',
        toString(s.status)
    ) AS status,
    s.changed_at AS status_changed_at,
    s.changed_by AS status_changed_by,
    s.resolved_release AS resolved_release,
    s.ignore_until_events AS ignore_until_events,
    s.ignore_until AS ignore_until
FROM
(
    SELECT
        any(org_id) AS org_id,
        project_id,
        issue_id,
        sum(events) AS events,
        uniqExactMerge(users) AS users_affected,
        min(first_seen) AS first_seen,
        max(last_seen) AS last_seen,
        max(last_received) AS last_received,
        argMaxMerge(title) AS title,
        argMaxMerge(culprit) AS culprit,
        argMaxMerge(level) AS level,
        argMaxMerge(platform) AS platform,
        argMaxMerge(last_release) AS last_release
    FROM issue_live_counters
    WHERE project_id = {project_id:UInt64}
    GROUP BY project_id, issue_id
) AS l
LEFT JOIN
(
    SELECT * FROM issues FINAL WHERE project_id = {project_id:UInt64}
) AS m ON m.project_id = l.project_id AND m.issue_id = l.issue_id
LEFT JOIN
(
    SELECT * FROM issue_state FINAL WHERE project_id = {project_id:UInt64}
) AS s ON s.project_id = l.project_id AND s.issue_id = l.issue_id
SETTINGS join_use_nulls = 0
