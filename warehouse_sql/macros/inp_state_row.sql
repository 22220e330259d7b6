-- One `inp_interactions` row (interaction) as a state row of `inp_periods` (the columns after the key, migration
-- 0260): the hour fill merges these per hour (macro inp_merge); the INP view's partial edge hours count the
-- interactions the same way per page, target, type and browser (macro inp_window). Third-party time is counted
-- where the browser gave long-animation-frame data (loaf = 1). The histogram entries come from the buckets stored
-- with the interaction (migration 0280, macro inp_bucket_entry).
toUInt64(1) AS interactions, toUInt64(input_delay IS NOT NULL) AS attributed, toUInt64(loaf = 1) AS with_scripts,
inp AS inp_sum, ifNull(input_delay, 0) AS input_delay_sum, ifNull(processing, 0) AS processing_sum,
ifNull(presentation, 0) AS presentation_sum, ifNull(third_party_ms, 0) AS third_party_sum,
${inp_bucket_entry(b=inp_bucket)} AS inp_hist,
${inp_bucket_entry(b=input_delay_bucket)} AS input_delay_hist,
${inp_bucket_entry(b=processing_bucket)} AS processing_hist,
${inp_bucket_entry(b=presentation_bucket)} AS presentation_hist,
${inp_bucket_entry(b=third_party_bucket)} AS third_party_hist,
if(loaf = 1, first_party_ms, 0) AS first_ms, if(loaf = 1, ifNull(third_party_ms, 0), 0) AS third_ms,
toUInt64(loaf = 1 AND ifNull(third_party_ms, 0) > 0) AS third_interactions
