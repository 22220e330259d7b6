-- A retention run: one project's rows of one raw table older than its retention. A mutation (run to its end,
-- mutations_sync): the parts holding such rows are rewritten without them and the old parts removed, so the
-- disk is freed — a lightweight DELETE would only mask the rows until a merge.
ALTER TABLE {table:Identifier}
DELETE WHERE project_id = {project_id:UInt64} AND {time:Identifier} < {before:DateTime64(3)}
