-- The database's tables that hold data (views hold none; a materialized view's rows are in its target table).
SELECT name, engine
FROM system.tables
WHERE database = {database:String}
  AND engine LIKE '%MergeTree%'
ORDER BY name
