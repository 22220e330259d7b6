-- Whether the database {db} holds the migration runner's table yet (a database no run has migrated does not).
SELECT count()
FROM system.tables
WHERE database = {db:String} AND name = 'schema_migrations'
