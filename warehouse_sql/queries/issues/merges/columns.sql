-- The columns of a table of this database, in order (a regroup names them in its INSERT).
SELECT name FROM system.columns
WHERE database = currentDatabase() AND table = {table:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS')
ORDER BY position
