-- Every stored file of one project, newest upload first (the source maps page).
-- Manifest rows (`sourcemap_files`), one per file and project.
SELECT bundle_id, release, dist, url, file_type, debug_id, sourcemap, sha1, size, uploaded_at
FROM sourcemap_files FINAL
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64}
ORDER BY uploaded_at DESC, bundle_id, url
