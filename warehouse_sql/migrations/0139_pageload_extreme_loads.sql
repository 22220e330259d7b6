-- The page detail lists a page's 3 fastest and 3 slowest page loads of its window; it scanned every page load of
-- the page in the window in `pageload_facts` (~50 k rows for 30 days at 1 M page loads, ten times that at 10 M).
-- Each hour and day state now keeps its own 3 fastest and 3 slowest page loads as (load time, event id, start,
-- score), sorted the way the view picks them (load time, then event id; the slowest by load time descending, then
-- event id): the window's 3 fastest and 3 slowest are among its days', hours' and edge page loads' own, so the
-- view merges a few rows per day instead of scanning the facts.
ALTER TABLE pageload_hours
    ADD COLUMN IF NOT EXISTS fastest Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64)))
        AFTER dist,
    ADD COLUMN IF NOT EXISTS slowest Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64)))
        AFTER fastest;

ALTER TABLE pageload_days
    ADD COLUMN IF NOT EXISTS fastest Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64)))
        AFTER dist,
    ADD COLUMN IF NOT EXISTS slowest Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64)))
        AFTER fastest;

-- The states fill again on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
