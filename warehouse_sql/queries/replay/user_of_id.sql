-- Who a replay's user id is, from the project's events of that user around the replay (a browser SDK's replay
-- events often carry the id alone, its errors the e-mail and name set with Sentry.setUser): the latest e-mail and
-- name given with the id, '' when none.
SELECT argMaxIf(user_email, timestamp, user_email != '') AS given_email,
       argMaxIf(user_name, timestamp, user_name != '') AS given_name
FROM events
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND user_id = {user_id:String}
  AND timestamp BETWEEN {since:DateTime64(3)} AND {until:DateTime64(3)}
