-- One interaction's value `${v}` (ms) as the INP states' 1 % log histograms keep it (migration 0260, macro
-- inp_hist_entry): its bucket's value (macro pageload_hist_value), NULL for NULL. The rows-based readers of the INP
-- part metrics (budgets and alert rules: queries/performance/*_inp_interactions.sql; Explore's `interactions`) take
-- percentiles over it with quantileExactWeightedInterpolated, so their figures are the INP view's.
if(${v} IS NULL, NULL, arrayMap(x -> ${pageload_hist_value}, [assumeNotNull(${v})])[1])
