-- Remove the contents a deleted bundle held ({gone}) that no other file of the organization uses
-- (`sourcemap_blobs`, kind 'file').
DELETE FROM sourcemap_blobs
WHERE org_id = {org:UInt64} AND kind = 'file' AND sha1 IN {gone:Array(String)}
  AND sha1 NOT IN (SELECT sha1 FROM sourcemap_files WHERE org_id = {org:UInt64})
