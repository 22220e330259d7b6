-- Record the landing attempts a run handled ({attempts}: source, org, batch id, receive time, rows), so later
-- runs do not handle them again.
INSERT INTO event_counter_repairs (source, org_id, batch_id, received_at, rows, repaired_at)
SELECT a.1, a.2, a.3, a.4, a.5, {repaired_at:DateTime64(3, 'UTC')}
FROM (SELECT arrayJoin({attempts:Array(Tuple(String, UInt64, String, DateTime64(3, 'UTC'), UInt64))}) AS a)
