-- The trace ids a replay's segments saw (the SDK lists them per segment), first seen first.
SELECT arrayDistinct(arrayFlatten(groupArray(trace_ids))) AS trace_ids
FROM replays
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND replay_id = {replay_id:UUID}
SETTINGS ${view_settings}
