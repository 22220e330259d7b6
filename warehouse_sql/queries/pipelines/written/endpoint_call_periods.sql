-- The rows of `endpoint_call_periods` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM endpoint_call_periods WHERE ${written_states}
