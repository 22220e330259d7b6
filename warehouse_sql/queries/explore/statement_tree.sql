-- The resolved query tree of an organization's SQL panel (stacklens/explore/sql_panel.py): EXPLAIN QUERY TREE
-- names every table (as database.table, common table expressions resolved) and table function a statement
-- reads, without running it. {statement} is a text the guard has already read as one read-only statement
-- (statement_guard.py).
EXPLAIN QUERY TREE {statement}
