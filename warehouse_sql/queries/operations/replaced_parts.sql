-- Parts of the raw tables that a mutation or merge replaced and that are still on disk (removed by the table's
-- cleanup thread): a retention run waits for them to go before it reports the disk it freed.
SELECT count() AS parts, sum(bytes_on_disk) AS bytes
FROM system.parts
WHERE database = {database:String} AND NOT active AND table IN {tables:Array(String)}
