-- One interaction's value `${v}` (ms) as the INP states' 1 % log histograms keep it (migration 0260): its bucket's
-- value (macro pageload_hist_value), NULL for NULL. Stored with each interaction (`inp_interactions` *_bucket
-- columns, migration 0280), which the states (macro inp_bucket_entry) and the INP view's edges read; the rows-based
-- readers of the INP part metrics (budgets and alert rules: queries/performance/*_inp_interactions.sql; Explore's
-- `interactions`) take percentiles over it with quantileExactWeightedInterpolated, so their figures are the view's.
if(${v} IS NULL, NULL, arrayMap(x -> ${pageload_hist_value}, [assumeNotNull(${v})])[1])
