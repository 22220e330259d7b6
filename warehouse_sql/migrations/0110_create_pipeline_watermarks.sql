-- How far each asset has read the raw layer (by received_at): a tick reads only rows received after it.
-- Advanced only when a run succeeds, so a failed run's data is read again on the next tick.
CREATE TABLE IF NOT EXISTS pipeline_watermarks
(
    asset       String,
    watermark   DateTime64(3, 'UTC'),
    updated_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY asset
