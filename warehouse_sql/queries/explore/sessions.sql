-- Explore's `sessions` dataset (stacklens/explore/datasets.py): the release-health rows of the organization's
-- projects whose sessions started in the window [since, until) — one row per session update, or per bucket and
-- status of an SDK's session aggregate (migration 0011). Columns: ts (the session's start: every update repeats
-- it, as Relay buckets sessions), uid (the user: `distinct_id`), tags (none: an empty map), f_<field>, and what
-- the dataset's measures count with: s_session (the session id), s_aggregate (an aggregate row: nil id), s_init
-- (the update starts the session), s_quantity (an aggregate's count), s_bad (errors seen or an error status).
SELECT started AS ts, distinct_id AS uid, CAST(map(), 'Map(String, String)') AS tags,
       environment AS f_environment, release AS f_release, status AS f_status, source AS f_source,
       session_id AS s_session, session_id = toUUID('00000000-0000-0000-0000-000000000000') AS s_aggregate,
       init AS s_init, quantity AS s_quantity,
       errors > 0 OR status IN ('errored', 'crashed', 'abnormal', 'unhandled') AS s_bad
FROM sessions
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND started >= {since:DateTime64(3, 'UTC')} AND started < {until:DateTime64(3, 'UTC')}
