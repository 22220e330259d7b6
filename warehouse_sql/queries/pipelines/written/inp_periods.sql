-- The rows of `inp_periods` the run wrote (its row count in the run's materialization).
SELECT count() FROM inp_periods WHERE ${written_states}
