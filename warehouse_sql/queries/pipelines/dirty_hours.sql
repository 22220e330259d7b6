-- Hours in [{start}, {end}) with rows received after {since} in the given raw tables (raw_arrival_hours).
SELECT DISTINCT hour FROM raw_arrival_hours
WHERE has({tables:Array(String)}, toString(source)) AND received > {since:DateTime64(3, 'UTC')}
  AND hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
ORDER BY hour
