-- The newest received_at over the raw tables: where the next watermark will stand (kept at insert time in
-- raw_received; epoch when nothing has been stored yet).
SELECT max(received) FROM raw_received
