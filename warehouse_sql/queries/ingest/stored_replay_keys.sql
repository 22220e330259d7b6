-- Which of a batch's replay segments of one project are already stored in {table} (`replays` or
-- `replay_segments`), each keyed as "<replay uuid>:<segment>": the duplicate check before an insert (as
-- stored_event_ids.sql, numbered and joined with UNION ALL by stacklens/ingest/writer.py).
SELECT {table:String}, org_id, project_id, concat(toString(replay_id), ':', toString(segment_id))
FROM {table:Identifier}
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64}
  AND concat(toString(replay_id), ':', toString(segment_id)) IN {ids:Array(String)}
