-- Which of a batch's event ids of one project are already stored in {table} (`events` or `transactions`; the
-- name picked by stacklens/ingest/writer.py from its fixed set): the duplicate check before an insert. The
-- writer numbers the parameters of each copy and joins the copies of a batch with UNION ALL (one round trip).
SELECT {table:String}, org_id, project_id, toString(event_id)
FROM {table:Identifier}
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64} AND event_id IN {ids:Array(UUID)}
