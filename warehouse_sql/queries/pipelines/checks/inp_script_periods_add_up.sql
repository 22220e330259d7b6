-- Check inp_script_periods_add_up: among the periods the run wrote, scripts that ran in more interactions than
-- they ran, or whose time per part does not add up to their time (none is a pass).
SELECT count() FROM inp_script_periods
WHERE ${written_states}
  AND (interactions > runs OR abs(input_delay_ms + processing_ms + presentation_ms - ms) > 0.001 * (1 + ms))
