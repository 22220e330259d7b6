-- The raw tables with rows of dead landing attempts ({dead} in `events`, {dead_transactions} in
-- `transactions`) marked as received at {arrived}: where the schedules see new data (max_received), so the
-- runs that rebuild from the marked hours are planned even when nothing else arrives.
INSERT INTO raw_received (source, received)
SELECT 'events', {arrived:DateTime64(3, 'UTC')} WHERE length({dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}) > 0
UNION ALL
SELECT 'transactions', {arrived:DateTime64(3, 'UTC')}
WHERE length({dead_transactions:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}) > 0
