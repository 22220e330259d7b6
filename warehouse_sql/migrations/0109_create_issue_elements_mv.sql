-- Feeds issue_elements from every insert into `events`.
CREATE MATERIALIZED VIEW IF NOT EXISTS issue_elements_mv TO issue_elements AS
SELECT org_id, project_id, e.1 AS reason, e.2 AS element, issue_id
FROM events
ARRAY JOIN ${issue_elements} AS e
