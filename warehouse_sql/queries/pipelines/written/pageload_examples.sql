-- The rows of `pageload_examples` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM pageload_examples WHERE ${written_examples}
