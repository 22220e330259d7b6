-- Whether the configured database exists on the warehouse (`stacklens migrate --status` reads nothing before it
-- does).
SELECT count()
FROM system.databases
WHERE name = {db:String}
