-- Check inp_periods_add_up: among the periods the run wrote, those whose INP histogram does not count every
-- interaction, whose parts' histograms do not count the interactions with attribution, whose third-party histogram
-- counts more than the interactions with script data, or that do not start on a multiple of their grain (none is
-- a pass).
SELECT count() FROM inp_periods
WHERE ${written_states}
  AND (arraySum(inp_hist.2) != interactions OR arraySum(input_delay_hist.2) != attributed
       OR arraySum(processing_hist.2) != attributed OR arraySum(presentation_hist.2) != attributed
       OR arraySum(third_party_hist.2) > with_scripts OR with_scripts > interactions
       OR toUnixTimestamp(start) % (60 * CAST(grain, 'UInt16')) != 0)
