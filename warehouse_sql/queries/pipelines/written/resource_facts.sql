-- The rows of `resource_facts` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM resource_facts WHERE ${written_facts}
