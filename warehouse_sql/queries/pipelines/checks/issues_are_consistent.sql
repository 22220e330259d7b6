-- Check issues_are_consistent: the issues seen last before they were seen first, or without events.
SELECT count() FROM issues FINAL
WHERE first_seen > last_seen OR events = 0
