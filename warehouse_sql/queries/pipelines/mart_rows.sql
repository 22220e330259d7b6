-- The current rows of one mart (after replacement: FINAL), for the pipelines' status view and API. {table} is
-- one of pipelines/status.py's MART_TABLES, never input.
SELECT count() FROM {table:Identifier} FINAL
