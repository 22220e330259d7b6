-- The newest received_at of each raw table, kept at insert time: every schedule plan and incremental asset
-- asks where the next watermark stands, and max(received_at) over the raw tables costs a pass over a column
-- of every row. Grain: one row per raw table after merges; read with max().
-- Created, filled from the rows already stored, then fed by one materialized view per raw table.
CREATE TABLE IF NOT EXISTS raw_received
(
    source    LowCardinality(String),   -- events | transactions | spans
    received  SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY source;

INSERT INTO raw_received
SELECT 'events', max(received_at) FROM events HAVING count() > 0
UNION ALL SELECT 'transactions', max(received_at) FROM transactions HAVING count() > 0
UNION ALL SELECT 'spans', max(received_at) FROM spans HAVING count() > 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_received_events_mv TO raw_received AS
SELECT 'events' AS source, max(received_at) AS received FROM events;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_received_transactions_mv TO raw_received AS
SELECT 'transactions' AS source, max(received_at) AS received FROM transactions;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_received_spans_mv TO raw_received AS
SELECT 'spans' AS source, max(received_at) AS received FROM spans
