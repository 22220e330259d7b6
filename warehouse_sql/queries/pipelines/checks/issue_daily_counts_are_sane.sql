-- Check issue_daily_counts_are_sane: the daily rows the run wrote (version {v}) that count no event, or more
-- users than events.
SELECT count() FROM issue_daily_counts
WHERE materialized_at = {v:DateTime64(6, 'UTC')} AND (events = 0 OR users > events)
