-- Landing attempts of the ingest service with rows received in ({since}, {until}] in `events` or
-- `transactions` that no batch record carries and no earlier run handled (event_counter_repairs): attempts
-- still landing, or attempts that stopped (a crash) after some of their rows were stored. An attempt is its
-- rows' (org_id, batch_id, received_at); the record of a finished attempt carries the same three (rows stored
-- without a batch id, by hand or by a backfill, were not stored by an attempt and are left out).
SELECT source, org_id, batch_id, received_at, rows
FROM
(
    SELECT 'events' AS source, org_id, batch_id, received_at, count() AS rows
    FROM events
    WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
      AND batch_id != ''
    GROUP BY org_id, batch_id, received_at
    UNION ALL
    SELECT 'transactions' AS source, org_id, batch_id, received_at, count() AS rows
    FROM transactions
    WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
      AND batch_id != ''
    GROUP BY org_id, batch_id, received_at
)
WHERE (org_id, batch_id, received_at) NOT IN
    (SELECT org_id, batch_id, received_at FROM ingest_batches WHERE received_at > {since:DateTime64(3, 'UTC')})
  AND (source, org_id, batch_id, received_at) NOT IN
    (SELECT toString(source), org_id, batch_id, received_at FROM event_counter_repairs
     WHERE received_at > {since:DateTime64(3, 'UTC')})
ORDER BY received_at
