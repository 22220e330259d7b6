-- The warehouse's disks as the engine sees them (on a server: the server's volumes, not this host's).
SELECT name, path, free_space, total_space
FROM system.disks
ORDER BY name
