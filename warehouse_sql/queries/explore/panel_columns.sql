-- The columns of the documented tables an organization's SQL reads (stacklens/explore/sql_panel.py), in each
-- table's order, for the SQL editor's list.
SELECT table, name, type
FROM system.columns
WHERE database = currentDatabase() AND table IN {tables:Array(String)}
ORDER BY table, position
