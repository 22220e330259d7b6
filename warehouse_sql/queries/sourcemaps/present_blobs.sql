-- Which of some contents (by SHA-1) the organization already stores (`sourcemap_blobs`): an upload sends only the
-- others.
SELECT DISTINCT sha1
FROM sourcemap_blobs
WHERE org_id = {org:UInt64} AND kind = {kind:String} AND sha1 IN {wanted:Array(String)}
