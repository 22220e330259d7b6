-- The rows of {table} a run stamped with its version {v} (`materialized_at`): its materialization's row count.
-- {table} is one of the marts pipelines/warehouse_ops.py names (STAMPED_TABLES), never input.
SELECT count() FROM {table:Identifier} WHERE materialized_at = {v:DateTime64(6, 'UTC')}
