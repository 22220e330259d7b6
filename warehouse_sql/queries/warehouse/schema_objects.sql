-- Every table, dictionary and view of the database {db}, in an order that creates each after what it reads:
-- tables, then dictionaries (a dictionary may read a table), then views, then materialized views (which read
-- tables and write into one). The inner tables of materialized views without TO are their views' (their SHOW
-- CREATE makes them), so they are left out. Read by stacklens/warehouse/schema_file.py for warehouse_sql/schema.sql.
SELECT name, engine
FROM system.tables
WHERE database = {db:String} AND NOT startsWith(name, '.inner')
ORDER BY multiIf(engine = 'Dictionary', 1, engine = 'View', 2, engine = 'MaterializedView', 3, 0), name
