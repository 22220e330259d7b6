-- The timeline marks kept beside each segment of one replay (worked out at ingest), in segment order.
SELECT marks
FROM replay_segments FINAL
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND replay_id = {replay_id:UUID}
ORDER BY segment_id
