-- The events rows of dead landing attempts ({dead}: each attempt's org, batch and receipt time) received in
-- ({since}, {until}]: where a counter's compare query (queries/pipelines/*_compare.sql) looks for rows its
-- materialized view may have missed.
received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
AND (org_id, batch_id, received_at) IN {dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
