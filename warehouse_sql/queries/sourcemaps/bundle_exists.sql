-- Whether a project already has the manifest rows of a bundle (`sourcemap_files`): an upload of it again is a
-- no-op.
SELECT count()
FROM sourcemap_files
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64} AND bundle_id = {bundle:String}
