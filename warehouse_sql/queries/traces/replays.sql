-- The replays that saw one trace (a segment's trace_ids holds it), in the organization, first seen first.
SELECT toString(replay_id) AS replay_id, project_id, min(timestamp) AS first_seen
FROM replays
WHERE org_id = {org_id:UInt64} AND has(trace_ids, {trace_id:String})
GROUP BY replay_id, project_id
ORDER BY first_seen
LIMIT {limit:UInt32}
SETTINGS ${view_settings}
