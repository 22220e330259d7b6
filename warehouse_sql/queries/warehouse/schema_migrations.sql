-- The migration runner's own table (stacklens/warehouse/migrations.py): each applied migration file with the
-- SHA-256 of its text and the retention it was applied with. Created before any migration runs, so it is not a
-- migration itself; on a cluster it is rendered like the files' tables (replicated, with a Distributed table).
CREATE TABLE IF NOT EXISTS schema_migrations
(
    name            String,
    checksum        String,
    retention_days  UInt32,
    applied_at      DateTime64(3, 'UTC'),
    updated_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY name
