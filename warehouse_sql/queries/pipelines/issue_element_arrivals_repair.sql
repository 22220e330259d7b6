-- The elements of the rows of the dead landing attempts ({dead}) arrive again, stamped {arrived}: the `issues`
-- and `related_issues` assets read the arrivals after their watermarks, and both take them as sets (a user
-- already counted for an issue, a hash already in a sketch, changes nothing), so elements the view had
-- already written are harmless and the ones it lost reach users affected and the sketches.
INSERT INTO issue_element_arrivals (received_at, org_id, project_id, issue_id, reason, element)
SELECT {arrived:DateTime64(3, 'UTC')}, any(org_id), project_id, issue_id, e.1 AS reason, cityHash64(e.2) AS element
FROM events
ARRAY JOIN ${issue_elements} AS e
WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
  AND (org_id, batch_id, received_at) IN {dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
GROUP BY project_id, issue_id, reason, element
