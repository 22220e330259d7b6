-- What the engine says of one backup it made or restored: status, files, sizes, and why it failed.
SELECT status, error, num_files, total_size, uncompressed_size, compressed_size
FROM system.backups
WHERE id = {id:String}
