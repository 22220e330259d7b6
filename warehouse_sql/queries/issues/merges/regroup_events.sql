-- Move the stored events of the chosen fingerprints of one project to the issue each now belongs to (a merge's
-- target, or after a split the fingerprint's own derived issue). The fingerprint and grouping version stay as
-- grouping made them: only issue_id, which is not in the sort key, changes. Synchronous, so the counters
-- rebuilt next read the moved rows.
ALTER TABLE events
UPDATE issue_id = transform(fingerprint, {fingerprints:Array(String)}, {issue_ids:Array(UInt64)}, issue_id)
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND fingerprint IN {fingerprints:Array(String)}
SETTINGS mutations_sync = 2
