-- A retention run's look before it deletes: one project's rows of one raw table older than its retention (a
-- mutation rewrites every part it visits even when nothing matches, so none is started for no rows).
SELECT count() AS rows
FROM {table:Identifier}
WHERE project_id = {project_id:UInt64} AND {time:Identifier} < {before:DateTime64(3)}
