-- The INP view's scripts (stacklens/performance/inp/reads.py): the scripts of the long animation frames the
-- window's interactions overlapped (filters as inp_parts.sql), per source URL, function, invoker and party:
-- occurrences, interactions, total, average and per-part time (ms), ranked by their share of the attributed
-- (all scripts') time; `total_ms` is that attributed total, the same on every row. The window's whole hours and
-- days come from `inp_script_periods`, its partial edge hours from `inp_interactions` (as macro inp_window): an
-- interaction lies in one period, so the periods' interactions add up.
-- Read with pread on the reading thread, as inp_parts.sql says why.
SELECT url, host, function, invoker, third, sum(s_runs) AS runs, sum(s_interactions) AS interactions,
       sum(s_ms) AS ms, ms / runs AS avg_ms, sum(s_input_delay) AS input_delay_ms,
       sum(s_processing) AS processing_ms, sum(s_presentation) AS presentation_ms,
       sum(sum(s_ms)) OVER () AS total_ms
FROM
(
    SELECT url, host, function, invoker, third, runs AS s_runs, interactions AS s_interactions, ms AS s_ms,
           input_delay_ms AS s_input_delay, processing_ms AS s_processing, presentation_ms AS s_presentation
    FROM inp_script_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((grain = 'day' AND start >= {day_start:DateTime('UTC')} AND start < {day_end:DateTime('UTC')})
           OR (grain = 'hour' AND start >= {whole_start:DateTime('UTC')} AND start < {day_start:DateTime('UTC')})
           OR (grain = 'hour' AND start >= {day_end:DateTime('UTC')} AND start < {whole_end:DateTime('UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    UNION ALL
    SELECT url, host, function, invoker, third, count(), uniqExact(event_id), sum(run_ms),
           sumIf(run_ms, part = 'input_delay'), sumIf(run_ms, part = 'processing'),
           sumIf(run_ms, part = 'presentation')
    FROM inp_interactions FINAL
    ARRAY JOIN script_url AS url, script_host AS host, script_function AS function, script_invoker AS invoker,
               script_ms AS run_ms, script_part AS part, script_third AS third
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND NOT (ts >= {whole_start:DateTime64(3, 'UTC')} AND ts < {whole_end:DateTime64(3, 'UTC')})
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    GROUP BY url, host, function, invoker, third
)
GROUP BY url, host, function, invoker, third
ORDER BY ms DESC, url, function, invoker
LIMIT {limit:UInt32}
SETTINGS local_filesystem_read_method = 'pread', do_not_merge_across_partitions_select_final = 1, ${view_settings}
