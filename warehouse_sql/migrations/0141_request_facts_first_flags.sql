-- Each request fact carries what the states count per page load, computed once when its hour is built instead
-- of by window functions in every read of a window's partial edge hours (the largest cost of the resources,
-- endpoints and recommendations views): whether the row is its page load's first request of the resource / of
-- the type (resource_facts), its page load's first call of the endpoint and the load's calls of it
-- (endpoint_facts). A load's earlier requests are looked for from an hour before the hours built, as the hourly
-- states did.
ALTER TABLE resource_facts
    ADD COLUMN IF NOT EXISTS first_of_resource UInt8 DEFAULT 0 AFTER fcp,
    ADD COLUMN IF NOT EXISTS first_of_type UInt8 DEFAULT 0 AFTER first_of_resource;

ALTER TABLE endpoint_facts
    ADD COLUMN IF NOT EXISTS first_of_load UInt8 DEFAULT 0 AFTER description,
    ADD COLUMN IF NOT EXISTS per_load UInt32 DEFAULT 0 AFTER first_of_load;

-- The facts and their states fill again on the assets' next runs: they start over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
