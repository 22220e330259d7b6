-- Refresh the hours (grain 'hour') of `inp_script_periods` in [{start}, {end}) from `inp_interactions` (refreshed
-- just before by the same tick): per hour, filter dimensions, page and script (source URL, host, function, invoker)
-- of the interactions' long animation frames: its party as the interactions were classified, runs, interactions it
-- ran in, its time in all and per part.
INSERT INTO inp_script_periods
SELECT org_id, project_id, 'hour' AS grain, toStartOfHour(ts) AS hour, environment, release, browser, page, url,
       host, function, invoker, max(third), count(), uniqExact(event_id), sum(run_ms),
       sumIf(run_ms, part = 'input_delay'), sumIf(run_ms, part = 'processing'), sumIf(run_ms, part = 'presentation'),
       {materialized_at:DateTime64(6, 'UTC')}
FROM inp_interactions FINAL
ARRAY JOIN script_url AS url, script_host AS host, script_function AS function, script_invoker AS invoker,
           script_ms AS run_ms, script_part AS part, script_third AS third
WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
GROUP BY org_id, project_id, hour, environment, release, browser, page, url, host, function, invoker
