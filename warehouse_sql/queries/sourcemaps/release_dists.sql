-- Per project of the organization, the (release, dist) pairs with uploaded files: half of the index that tells
-- ingest whether an event could be symbolicated at all (stacklens/sourcemaps/store.py, map_index).
SELECT DISTINCT project_id, release, dist
FROM sourcemap_files FINAL
WHERE org_id = {org:UInt64} AND release != ''
