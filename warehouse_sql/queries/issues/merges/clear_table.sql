-- Clear the rows of some issues of one project from an insert-time table keyed by issue ({table}: one the
-- engine named in fed_tables), before the regroup feeds it again from their stored events. Synchronous.
ALTER TABLE {table:Identifier}
DELETE WHERE project_id = {project_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
SETTINGS mutations_sync = 2
