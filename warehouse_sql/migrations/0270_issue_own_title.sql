-- A merge keeps the surviving issue's name (issue 71): an issue is named by the title and culprit of the latest
-- of its own events — those whose fingerprint gives this issue by itself, not fingerprints merged into it
-- (stacklens/metrics/issue_figures.py) — and only when it holds none of its own, by its latest event's. Before,
-- the survivor kept its id but took the title and culprit of the merged issue's newer events.
-- An event is the issue's own when issue_id = int(sha256("<project_id>:<fingerprint>")[:13], 16)
-- (stacklens.ingest.grouping.issue_id_for): the first 8 bytes of the digest read big-endian, less 12 bits.
-- own_name holds (title, culprit) of the latest own event, ('', '') for an issue with no own event.
ALTER TABLE issue_live_counters
    ADD COLUMN IF NOT EXISTS own_name
        AggregateFunction(argMax, Tuple(String, String), Tuple(DateTime64(3, 'UTC'), UUID))
    AFTER latest_title;

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
    argMaxState(events.title, (timestamp, event_id)) AS latest_title,
    argMaxStateIf(
        (events.title, if(events.culprit != '', events.culprit, in_app_frames[1])),
        (timestamp, event_id),
        issue_id = bitShiftRight(reinterpretAsUInt64(reverse(substring(
            SHA256(concat(toString(project_id), ':', fingerprint)), 1, 8))), 12)
    ) AS own_name
FROM events
GROUP BY org_id, project_id, issue_id;

-- Events stored before: their issues' own-name states. The other columns merge as no-ops (events 0, empty
-- states, the issue's own first / last seen and last receive time again).
INSERT INTO issue_live_counters (org_id, project_id, issue_id, events, first_seen, last_seen, last_received,
                                 own_name)
SELECT org_id, project_id, issue_id, toUInt64(0), min(timestamp), max(timestamp), max(received_at),
       argMaxStateIf(
           (title, if(culprit != '', culprit, in_app_frames[1])),
           (timestamp, event_id),
           issue_id = bitShiftRight(reinterpretAsUInt64(reverse(substring(
               SHA256(concat(toString(project_id), ':', fingerprint)), 1, 8))), 12)
       )
FROM events
GROUP BY org_id, project_id, issue_id
;

-- The issue list view names every issue by that rule; the rest of the view is as 0150 made it.
DROP VIEW IF EXISTS issue_list;

CREATE VIEW issue_list AS
SELECT
    l.org_id AS org_id,
    l.project_id AS project_id,
    l.issue_id AS issue_id,
    m.fingerprint AS fingerprint,
    if(l.own_name.1 != '', l.own_name.1, l.title) AS title,
    if(l.own_name.1 != '', l.own_name.2, if(m.issue_id != 0, m.culprit, l.culprit)) AS culprit,
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
        argMaxMerge(own_name) AS own_name,
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
