-- A regroup's feed of one issue table: its materialized view's own SELECT ({feed}, read from the engine, over
-- the regrouped issues' events) inserted by name ({columns}: the table's columns the SELECT answers, quoted;
-- {table}: the view's TO table, quoted): an INSERT … SELECT takes columns by position, a view by name.
INSERT INTO {table} ({columns}) SELECT {columns} FROM ({feed})
