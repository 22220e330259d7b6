-- One interaction's stored bucket `${b}` (an `inp_interactions` *_bucket column, migration 0280: macro
-- inp_hist_value of the value at write) as an entry of the INP states' histograms: ([b], [1]), or ([], []) when the
-- value was not reported (no sample, never 0 ms).
(if(${b} IS NULL, [], [assumeNotNull(${b})]), if(${b} IS NULL, [], [toUInt32(1)]))
