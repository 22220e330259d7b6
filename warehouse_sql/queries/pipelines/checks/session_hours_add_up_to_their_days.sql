-- Check session_hours_add_up_to_their_days: the days the run wrote (version {v}) whose sessions, errored or
-- crashed sessions differ from the sums of their hours.
SELECT count()
FROM (SELECT project_id, release, environment, start AS day, sessions, errored, crashed
      FROM session_periods FINAL WHERE grain = 'day' AND materialized_at = {v:DateTime64(6, 'UTC')}) AS d
LEFT JOIN (SELECT project_id, release, environment, toStartOfDay(start) AS day,
                  sum(sessions) AS s, sum(errored) AS e, sum(crashed) AS c
           FROM session_periods FINAL
           WHERE grain = 'hour'
           GROUP BY project_id, release, environment, day) AS h
  USING (project_id, release, environment, day)
WHERE d.sessions != h.s OR d.errored != h.e OR d.crashed != h.c
