-- One replay's segments in segment order, with their stored (compressed, base64) bytes.
SELECT segment_id, timestamp, end_timestamp, encoding, has_full_snapshot, size_bytes, payload
FROM replay_segments FINAL
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND replay_id = {replay_id:UUID}
ORDER BY segment_id
