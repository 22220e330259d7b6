-- Which of a batch's rows of one project are already stored in {table} (`sessions` or `logs`), by their
-- `dedup_key` (what makes two rows the same: stacklens.ingest.sessions, stacklens.ingest.logs): the duplicate
-- check before an insert (as stored_event_ids.sql, numbered and joined with UNION ALL by
-- stacklens/ingest/writer.py).
SELECT {table:String}, org_id, project_id, toString(dedup_key)
FROM {table:Identifier}
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64} AND dedup_key IN {ids:Array(String)}
