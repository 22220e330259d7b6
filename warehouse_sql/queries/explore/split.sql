-- A page-load question asking some aggregates the states carry and some they do not (stacklens/explore/sql.py:
-- INP, DOM ready, min, max, unique users): the groups of the first over the state rows ({states}: grouped.sql over
-- queries/explore/pageload_states.sql, with `samples`) beside the groups of the others over the raw page loads
-- (in {join}: grouped.sql over queries/explore/pageloads.sql), joined on the group keys (LEFT JOIN … USING (g0, …,
-- bucket), or a CROSS JOIN of the two single rows) before answer.sql orders and cuts them, so the groups, their
-- order and the limit are the single query's. {raw_columns}: the raw part's aggregates and value counts by alias.
SELECT s.*, {raw_columns}
FROM ({states}) AS s
{join}
