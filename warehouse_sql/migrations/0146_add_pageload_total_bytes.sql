-- Each page load's bytes of every resource and API call it made (encoded body size, else transfer size: what
-- `js_bytes` counts for its scripts), kept with the page load and summed per period, so a budget or an alert rule
-- on the transfer size per page view reads the page-load states of its scope — a route or a pattern of the page
-- column — as it reads the JavaScript bytes, instead of hourly resource states of their own.
ALTER TABLE pageload_facts
    ADD COLUMN IF NOT EXISTS total_bytes Int64 DEFAULT 0 AFTER js_bytes;

ALTER TABLE pageload_periods
    ADD COLUMN IF NOT EXISTS total_bytes Int64 DEFAULT 0 AFTER js_bytes;

-- The facts and their states fill again on page_metrics' next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
