-- Replays recorded in one release of the project (the replay events name their release) since {since}.
SELECT uniqExact(replay_id) AS replays
FROM replays FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND release = {release:String}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
