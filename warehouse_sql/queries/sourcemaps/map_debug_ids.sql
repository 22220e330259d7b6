-- Per project of the organization, the debug ids of its uploaded source maps: the other half of the index of
-- release_dists.sql.
SELECT DISTINCT project_id, debug_id
FROM sourcemap_files FINAL
WHERE org_id = {org:UInt64} AND debug_id != '' AND file_type = 'source_map'
