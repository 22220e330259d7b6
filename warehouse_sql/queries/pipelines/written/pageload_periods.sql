-- The rows of `pageload_periods` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM pageload_periods WHERE ${written_states}
