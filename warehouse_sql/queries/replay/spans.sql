-- Where one replay's playable recording starts (its first full snapshot) and where it ends: what decides
-- whether an error's "View Replay" can show the moment of the error.
SELECT
    min(timestamp) AS started,
    minIf(timestamp, has_full_snapshot = 1) AS playable_from,
    countIf(has_full_snapshot = 1) AS snapshots,
    max(end_timestamp) AS ended
FROM replay_segments FINAL
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND replay_id = {replay_id:UUID}
