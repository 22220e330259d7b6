-- An events row of an attempt that may still be landing: received after {young} and neither finished nor dead
-- (not in {settled}). Its view blocks may be on the way, so the compare queries (queries/pipelines/
-- *_compare.sql) count it as in flight and leave its issue or release for the next run.
received_at > {young:DateTime64(3, 'UTC')} AND batch_id != ''
AND (org_id, batch_id, received_at) NOT IN {settled:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
