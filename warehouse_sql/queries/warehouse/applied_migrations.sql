-- The migrations applied so far, with the checksum and retention each was applied with (`schema_migrations`).
SELECT name, checksum, applied_at, retention_days
FROM schema_migrations FINAL
ORDER BY name
