-- The newest received_at over the raw tables: where the next watermark will stand.
SELECT greatest(
    (SELECT max(received_at) FROM events),
    (SELECT max(received_at) FROM transactions),
    (SELECT max(received_at) FROM spans))
