-- Every key the front door's look-ups can find (stored_event_ids.sql, stored_replay_keys.sql,
-- stored_dedup_keys.sql, batch_records.sql), as a digest: the first 8 bytes of the MD5 of
-- "<org>:<table>:<key>" read as a little-endian UInt64, the key spelled as those look-ups return it
-- ("<project>:<event id>" and its kin; the batch id for ingest_batches). stacklens/ingest/stored_key_index.py
-- computes the same digest of a key in Python and loads these once at start. Without FINAL: a row kept twice
-- until a merge gives the same digest twice, which the index keeps once.
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':events:', toString(project_id), ':', toString(event_id))))
FROM events
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':transactions:', toString(project_id), ':',
                                      toString(event_id))))
FROM transactions
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':replays:', toString(project_id), ':',
                                      toString(replay_id), ':', toString(segment_id))))
FROM replays
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':replay_segments:', toString(project_id), ':',
                                      toString(replay_id), ':', toString(segment_id))))
FROM replay_segments
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':sessions:', toString(project_id), ':', dedup_key)))
FROM sessions
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':logs:', toString(project_id), ':', dedup_key)))
FROM logs
UNION ALL
SELECT reinterpretAsUInt64(MD5(concat(toString(org_id), ':ingest_batches:', batch_id)))
FROM ingest_batches
