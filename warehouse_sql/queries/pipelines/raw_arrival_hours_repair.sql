-- The hours of the rows of the dead landing attempts ({dead} in `events`, {dead_transactions} in
-- `transactions`) marked as received at {arrived}: every asset that rebuilds what arrived after its watermark
-- (daily issue counts, performance marts, trends, release impact) rebuilds them on its next run, from the
-- states the repair corrected and from the raw rows.
INSERT INTO raw_arrival_hours (source, project_id, hour, received)
SELECT 'events', project_id, toStartOfHour(timestamp) AS h, {arrived:DateTime64(3, 'UTC')}
FROM events
WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
  AND (org_id, batch_id, received_at) IN {dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
GROUP BY project_id, h
UNION ALL
SELECT 'transactions', project_id, toStartOfHour(timestamp) AS h, {arrived:DateTime64(3, 'UTC')}
FROM transactions
WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
  AND (org_id, batch_id, received_at) IN {dead_transactions:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
GROUP BY project_id, h
