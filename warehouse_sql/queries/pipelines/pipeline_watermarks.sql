-- Record how far, by received_at, an asset has read the raw layer (a new row; readers take the latest).
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ({asset:String}, {watermark:DateTime64(3, 'UTC')}, {updated_at:DateTime64(6, 'UTC')})
