-- Each named asset's latest watermark (`pipeline_watermarks`): how far, by received_at, it has read the raw layer.
SELECT asset, argMax(watermark, updated_at)
FROM pipeline_watermarks
WHERE asset IN {names:Array(String)}
GROUP BY asset
