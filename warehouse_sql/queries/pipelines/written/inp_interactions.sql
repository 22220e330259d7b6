-- The rows of `inp_interactions` the run wrote (its row count in the run's materialization).
SELECT count() FROM inp_interactions WHERE ${written_facts}
