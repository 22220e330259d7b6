-- One title per issue, chosen by one rule everywhere (stacklens/metrics/issue_figures.py): the title of the issue's
-- latest event, latest by event time with the event id breaking ties, the order in which the issue page lists
-- events and opens on the newest. The title states kept until now chose by receive time (live counters: a batch
-- shares one receive time, so among its events the pick was arbitrary) or by event time alone (the `issues`
-- mart), so the list, the issue page and related issues could each name the issue by another event's message.
ALTER TABLE issue_live_counters
    ADD COLUMN IF NOT EXISTS latest_title AggregateFunction(argMax, String, Tuple(DateTime64(3, 'UTC'), UUID))
    AFTER last_release;

DROP VIEW IF EXISTS issue_live_counters_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS issue_live_counters_mv TO issue_live_counters AS
SELECT
    org_id,
    project_id,
    issue_id,
    toUInt64(count()) AS events,
    uniqExactStateIf(user_key, user_key != '') AS users,
    min(timestamp) AS first_seen,
    max(timestamp) AS last_seen,
    max(received_at) AS last_received,
    argMaxState(title, received_at) AS title,
    argMaxState(culprit, received_at) AS culprit,
    argMaxState(toString(level), received_at) AS level,
    argMaxState(toString(platform), received_at) AS platform,
    argMaxState(toString(release), received_at) AS last_release,
    argMaxState(events.title, (timestamp, event_id)) AS latest_title
FROM events
GROUP BY org_id, project_id, issue_id;

-- Events stored before: their issues' latest-title states. The other columns merge as no-ops (events 0, empty
-- states, the issue's own first / last seen and last receive time again).
INSERT INTO issue_live_counters (org_id, project_id, issue_id, events, first_seen, last_seen, last_received,
                                 latest_title)
SELECT org_id, project_id, issue_id, toUInt64(0), min(timestamp), max(timestamp), max(received_at),
       argMaxState(title, (timestamp, event_id))
FROM events
GROUP BY org_id, project_id, issue_id
;

-- The issue list view names every issue by that title (the mart's copy could be a schedule tick behind, and chose
-- by event time alone); the rest of the view is as 0107 made it.
DROP VIEW IF EXISTS issue_list;

CREATE VIEW issue_list AS
SELECT
    l.org_id AS org_id,
    l.project_id AS project_id,
    l.issue_id AS issue_id,
    m.fingerprint AS fingerprint,
    l.title AS title,
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
        argMaxMerge(latest_title) AS title,
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
