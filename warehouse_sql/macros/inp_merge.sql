-- The merge of INP state rows (macro inp_state_row or the table's own rows, migration 0260) per key: counts and
-- sums added, histograms added (sumMap). Used after the key columns by the hour and day fills of `inp_periods`.
sum(interactions), sum(attributed), sum(with_scripts), sum(inp_sum), sum(input_delay_sum), sum(processing_sum),
sum(presentation_sum), sum(third_party_sum), sumMap(inp_hist.1, inp_hist.2),
sumMap(input_delay_hist.1, input_delay_hist.2), sumMap(processing_hist.1, processing_hist.2),
sumMap(presentation_hist.1, presentation_hist.2), sumMap(third_party_hist.1, third_party_hist.2), sum(first_ms),
sum(third_ms), sum(third_interactions)
