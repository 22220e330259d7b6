-- The errors of one replay: tagged with its id by the SDK, or named in its replay events' error ids.
SELECT toString(event_id) AS event_id, issue_id, title, timestamp, level
FROM events
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
  AND timestamp BETWEEN {since:DateTime64(3)} AND {until:DateTime64(3)}
  AND (tags['replayId'] = {replay_hex:String} OR has({error_ids:Array(String)}, toString(event_id)))
ORDER BY timestamp
LIMIT 200
