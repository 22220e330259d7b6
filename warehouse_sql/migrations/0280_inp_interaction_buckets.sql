-- Each INP value of an interaction as the INP states' 1 % log histograms keep it (macro inp_hist_value: its
-- bucket's value, NULL for NULL), computed once when the interaction is written instead of on every read. The INP
-- view reads its window's partial edge hours from `inp_interactions` as state rows (macro inp_state_row); building
-- five histogram entries from these columns instead of from the values costs the engine ~10 ms less per view, most
-- of it in analysing the expressions (bench/inp.py, bench/RESULTS.md "INP"). The hour fill reads them too, so the
-- states and the view's edges keep the same buckets. Parts written before this have them computed when read.
ALTER TABLE inp_interactions
    ADD COLUMN IF NOT EXISTS inp_bucket Nullable(Float32) MATERIALIZED ${inp_hist_value(v=inp)};

ALTER TABLE inp_interactions
    ADD COLUMN IF NOT EXISTS input_delay_bucket Nullable(Float32) MATERIALIZED ${inp_hist_value(v=input_delay)};

ALTER TABLE inp_interactions
    ADD COLUMN IF NOT EXISTS processing_bucket Nullable(Float32) MATERIALIZED ${inp_hist_value(v=processing)};

ALTER TABLE inp_interactions
    ADD COLUMN IF NOT EXISTS presentation_bucket Nullable(Float32) MATERIALIZED ${inp_hist_value(v=presentation)};

ALTER TABLE inp_interactions
    ADD COLUMN IF NOT EXISTS third_party_bucket Nullable(Float32) MATERIALIZED ${inp_hist_value(v=third_party_ms)}
