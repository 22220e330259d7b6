-- The rows of `pageload_facts` the performance run wrote (its row count in the run's materialization).
SELECT count() FROM pageload_facts WHERE ${written_facts}
