-- A retention run (stacklens/operations/retention.py) rewrites the parts holding a project's expired rows; the
-- parts it replaced stay on disk until the table's cleanup thread removes them. That thread runs every 30-40 s
-- and backs off to 300 s when idle, so a run freed its disk minutes later. Checked every second (backing off to
-- 10 s), the replaced parts go within seconds of the run on the embedded engine (old_parts_lifetime 0); a
-- server still keeps them its own old_parts_lifetime (8 minutes by default). The thread only lists the
-- table's parts in memory: seven tables checked each second cost nothing measurable.
ALTER TABLE events MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE transactions MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE spans MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE sessions MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE logs MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE replays MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
ALTER TABLE replay_segments MODIFY SETTING cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 0;
