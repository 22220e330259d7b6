-- The rows of `endpoint_facts` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM endpoint_facts WHERE ${written_facts}
