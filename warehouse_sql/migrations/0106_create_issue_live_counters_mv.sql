-- Feeds issue_live_counters from every insert into `events` (synchronously, in the same INSERT).
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
    argMaxState(toString(release), received_at) AS last_release
FROM events
GROUP BY org_id, project_id, issue_id
