-- The INP view's scripts (stacklens/performance/inp/reads.py): the scripts of the long animation frames the
-- window's interactions overlapped (filters as inp_parts.sql), per source URL, function, invoker and party:
-- occurrences, interactions, total, average and per-part time (ms), ranked by their share of the attributed
-- (all scripts') time; `total_ms` is that attributed total, the same on every row.
SELECT url, host, function, invoker, third, count() AS runs, uniqExact(event_id) AS interactions,
       sum(run_ms) AS ms, avg(run_ms) AS avg_ms, sumIf(run_ms, part = 'input_delay') AS input_delay_ms,
       sumIf(run_ms, part = 'processing') AS processing_ms, sumIf(run_ms, part = 'presentation') AS presentation_ms,
       sum(sum(run_ms)) OVER () AS total_ms
FROM
(
    SELECT event_id, script_url, script_host, script_function, script_invoker, script_ms, script_part, script_third
    FROM inp_interactions FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
      AND notEmpty(script_ms)
)
ARRAY JOIN script_url AS url, script_host AS host, script_function AS function, script_invoker AS invoker,
           script_ms AS run_ms, script_part AS part, script_third AS third
GROUP BY url, host, function, invoker, third
ORDER BY ms DESC, url, function, invoker
LIMIT {limit:UInt32}
SETTINGS do_not_merge_across_partitions_select_final = 1, ${view_settings}
