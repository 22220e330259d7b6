-- The rows of `inp_script_periods` the run wrote (its row count in the run's materialization).
SELECT count() FROM inp_script_periods WHERE ${written_states}
