-- Refresh the MinHash sketches (issue_sketches) of every issue and reason with elements that arrived after
-- {since}: new sketch = the 10 smallest distinct hashes of (old sketch ∪ the new elements). A union is
-- idempotent, so the re-read overlap of the watermark cannot change a sketch twice. Only sketches that changed
-- are written; the pairs step works on the rows stamped {materialized_at}.
INSERT INTO issue_sketches
WITH
    fresh AS
    (
        SELECT any(org_id) AS org_id, project_id, reason, issue_id,
               arraySlice(arraySort(groupUniqArray(element)), 1, 10) AS hashes
        FROM issue_element_arrivals
        WHERE received_at > {since:DateTime64(3, 'UTC')}
        GROUP BY project_id, reason, issue_id
    ),
    old AS
    (
        SELECT project_id, reason, issue_id, hashes FROM issue_sketches FINAL
        WHERE (project_id, reason, issue_id) IN (SELECT project_id, reason, issue_id FROM fresh)
    )
SELECT f.org_id, f.project_id, f.reason, f.issue_id,
       arraySlice(arraySort(arrayDistinct(arrayConcat(o.hashes, f.hashes))), 1, 10) AS merged,
       {materialized_at:DateTime64(6, 'UTC')}
FROM fresh AS f
LEFT JOIN old AS o ON o.project_id = f.project_id AND o.reason = f.reason AND o.issue_id = f.issue_id
WHERE merged != o.hashes
SETTINGS join_use_nulls = 0
