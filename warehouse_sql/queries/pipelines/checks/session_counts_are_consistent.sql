-- Check session_counts_are_consistent: the periods the run wrote (version {v}) with more crashed and abnormal
-- sessions than errored ones (a crashed or abnormal session is an errored one).
SELECT count() FROM session_periods
WHERE materialized_at = {v:DateTime64(6, 'UTC')} AND crashed + abnormal > errored
