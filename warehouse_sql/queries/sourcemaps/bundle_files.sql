-- The files of one bundle of a project (what deleting the bundle removes), newest first.
-- Manifest rows (`sourcemap_files`), one per file and project.
SELECT bundle_id, release, dist, url, file_type, debug_id, sourcemap, sha1, size, uploaded_at
FROM sourcemap_files FINAL
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64} AND bundle_id = {bundle:String}
ORDER BY uploaded_at DESC, bundle_id, url
