-- The issues of one project whose derived status (the `issue_list` view's rules: regressed, ignore ended)
-- differs from the stored one, with their latest release: the changes the issues tick writes.
SELECT issue_id, stored_status, status, last_release
FROM issue_list(project_id = {p:UInt64})
WHERE status != stored_status
