-- The rows of `resource_request_periods` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM resource_request_periods WHERE ${written_states}
