-- The files symbolication can use for one event: those carrying one of its debug ids, and those of its
-- release and dist; newest first, so a re-upload wins.
-- Manifest rows (`sourcemap_files`), one per file and project.
SELECT bundle_id, release, dist, url, file_type, debug_id, sourcemap, sha1, size, uploaded_at
FROM sourcemap_files FINAL
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64}
  AND ((debug_id != '' AND debug_id IN {ids:Array(String)})
       OR (release != '' AND release = {release:String} AND dist = {dist:String}))
ORDER BY uploaded_at DESC, bundle_id, url
