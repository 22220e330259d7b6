-- The endpoint detail lists the 5 slowest calls of an endpoint in its window; it scanned every call of the window
-- in `endpoint_facts` (3 M rows for 30 days at 1 M page loads). Each hour and day state now keeps its 5 slowest
-- calls (duration descending, then event id: the order the view sorts by, so the window's 5 slowest are among
-- its days', hours' and edge calls' own 5 slowest), as parallel arrays: duration, the page load or server
-- transaction (event id), start, status code and description.
ALTER TABLE endpoint_call_hours
    ADD COLUMN IF NOT EXISTS slow_ms Array(Float64) AFTER pages,
    ADD COLUMN IF NOT EXISTS slow_event Array(String) AFTER slow_ms,
    ADD COLUMN IF NOT EXISTS slow_ts Array(DateTime64(3, 'UTC')) AFTER slow_event,
    ADD COLUMN IF NOT EXISTS slow_status Array(UInt16) AFTER slow_ts,
    ADD COLUMN IF NOT EXISTS slow_description Array(String) AFTER slow_status;

ALTER TABLE endpoint_call_days
    ADD COLUMN IF NOT EXISTS slow_ms Array(Float64) AFTER pages,
    ADD COLUMN IF NOT EXISTS slow_event Array(String) AFTER slow_ms,
    ADD COLUMN IF NOT EXISTS slow_ts Array(DateTime64(3, 'UTC')) AFTER slow_event,
    ADD COLUMN IF NOT EXISTS slow_status Array(UInt16) AFTER slow_ts,
    ADD COLUMN IF NOT EXISTS slow_description Array(String) AFTER slow_status;

-- The states fill again on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
