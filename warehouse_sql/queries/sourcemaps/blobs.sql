-- Stored contents by SHA-1 (`sourcemap_blobs`): the files and maps symbolication reads.
SELECT sha1, any(body)
FROM sourcemap_blobs
WHERE org_id = {org:UInt64} AND kind = {kind:String} AND sha1 IN {wanted:Array(String)}
GROUP BY sha1
