-- The materialized views fed by `events` whose target table is keyed by issue: (view's SELECT, target table).
-- A regroup clears the moved issues' rows in each target and feeds it again with the view's own SELECT over
-- the issues' stored events, so no view's aggregation is written twice.
SELECT v.as_select AS query, t.name AS target
FROM system.tables AS v
INNER JOIN system.tables AS t ON t.database = v.database
    AND match(v.create_table_query, concat('\\bTO\\s+`?', t.database, '`?\\.`?', t.name, '`?\\s'))
WHERE v.database = currentDatabase() AND v.engine = 'MaterializedView'
  AND match(v.as_select, '\\bFROM\\s+(`?\\w+`?\\.)?`?events`?\\b')
  AND (SELECT count() FROM system.columns AS c WHERE c.database = t.database AND c.table = t.name
       AND c.name IN ('project_id', 'issue_id')) = 2
ORDER BY target
