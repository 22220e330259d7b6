-- Per table of the database: rows, bytes on disk (compressed), bytes uncompressed, parts, from the engine's
-- active parts (what a query reads; parts a merge replaced are gone within old_parts_lifetime).
SELECT
    table,
    sum(rows) AS rows,
    sum(bytes_on_disk) AS bytes_on_disk,
    sum(data_uncompressed_bytes) AS bytes_uncompressed,
    count() AS parts
FROM system.parts
WHERE database = {database:String} AND active
GROUP BY table
ORDER BY bytes_on_disk DESC, table
