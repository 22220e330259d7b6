-- One interaction's value `${v}` (ms; NULL when not reported) as an entry of the INP states' 1 % log histograms
-- (migration 0260): ([its bucket's value], [1]) — macro pageload_hist_value, as the page-load states keep INP — or
-- ([], []) for NULL, so a value not reported is no sample, never 0 ms. The hour fill merges these with sumMap and
-- the INP view passes its edge hours' interactions through the same expression (macro inp_state_row).
(arrayMap(x -> ${pageload_hist_value}, if(${v} IS NULL, [], [assumeNotNull(${v})])),
 if(${v} IS NULL, [], [toUInt32(1)]))
