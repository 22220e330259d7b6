-- How far the marts over one raw table have come for one project (the "building" notice of the pages that read
-- them): per hour of the rows' own timestamps since {since} (raw_arrival_hours, kept at insert time: no pass
-- over the raw rows), whether its newest row was received before the asset's watermark (built) or after it
-- (waiting for the next run). The watermark is the asset's latest, epoch before its first run.
WITH (
    SELECT ifNull(argMax(watermark, updated_at), toDateTime64(0, 3, 'UTC'))
    FROM pipeline_watermarks WHERE asset = {asset:String}
) AS mark
SELECT countIf(received <= mark) AS built_hours,
       countIf(received > mark) AS pending_hours,
       minIf(hour, received > mark) AS oldest_pending
FROM
(
    SELECT hour, max(received) AS received
    FROM raw_arrival_hours
    WHERE source = {source:String} AND project_id = {project_id:UInt64} AND hour >= {since:DateTime('UTC')}
    GROUP BY hour
)
