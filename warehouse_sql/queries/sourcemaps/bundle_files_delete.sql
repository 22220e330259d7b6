-- Remove one bundle's manifest rows of a project (`sourcemap_files`): deleting a bundle.
DELETE FROM sourcemap_files
WHERE org_id = {org:UInt64} AND project_id = {project:UInt64} AND bundle_id = {bundle:String}
