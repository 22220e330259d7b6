-- One Explore answer (stacklens/explore/sql.py): the groups ({groups}: grouped.sql or rate.sql) ordered ({order}: an
-- answer column and direction, then the group keys; a time series by group, then bucket) and cut at {limit} rows
-- (the caller asks for one more than it shows, to tell a cut answer). {total}: for a download, the count of all
-- groups beside each row, so the answer says it was cut before its first byte. Per-query limits: a question may
-- cost the shared engine {max_execution_seconds} s, {max_memory_bytes} bytes, {max_rows_to_read} rows read and
-- {max_threads} threads (the other cores stay with ingest and the issue pages), run at CPU priority (nice) {nice}
-- (ingest and the pages first when the cores are busy); its answer comes in blocks of {block_rows} rows (what a
-- download holds at a time); readonly last (once it applies the query cannot change another setting).
SELECT *{total}
FROM ({groups})
ORDER BY {order}
LIMIT {limit}
SETTINGS max_execution_time = {max_execution_seconds}, max_memory_usage = {max_memory_bytes},
         max_rows_to_read = {max_rows_to_read}, read_overflow_mode = 'throw', max_threads = {max_threads},
         os_thread_priority = {nice}, max_block_size = {block_rows}, ${view_settings}, readonly = 1
