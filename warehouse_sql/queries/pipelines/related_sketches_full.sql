-- Rebuild every MinHash sketch (issue_sketches) from the stored events: per issue and reason the 10 smallest
-- distinct cityHash64 values of its users, 5-minute windows, in-app frames and releases (the same elements as
-- issue_element_arrivals_mv). Used by the first run and by a run whose watermark is older than the arrivals
-- kept; writes only sketches that changed.
INSERT INTO issue_sketches
WITH
    fresh AS
    (
        SELECT any(org_id) AS org_id, project_id, e.1 AS reason, issue_id,
               arraySlice(arraySort(groupUniqArray(cityHash64(e.2))), 1, 10) AS hashes
        FROM events
        ARRAY JOIN ${issue_elements} AS e
        GROUP BY project_id, reason, issue_id
    ),
    old AS (SELECT project_id, reason, issue_id, hashes FROM issue_sketches FINAL)
SELECT f.org_id, f.project_id, f.reason, f.issue_id, f.hashes, {materialized_at:DateTime64(6, 'UTC')}
FROM fresh AS f
LEFT JOIN old AS o ON o.project_id = f.project_id AND o.reason = f.reason AND o.issue_id = f.issue_id
WHERE f.hashes != o.hashes
SETTINGS join_use_nulls = 0
