-- The records a logs search keeps (the logs view, its API and its chart): one project's records in the window
-- [since, until), of the severities asked (none: any), of one service, environment, release and trace ('' =
-- any), whose body or an attribute value holds the search text (`pattern`: a LIKE pattern, lower-cased, its
-- % and _ escaped; '' = any), read from `search_text` (the body and the values lower-cased, one per line, with
-- an n-gram bloom filter: migration 0014). Every value is a query parameter.
org_id = {org_id:UInt64}
AND project_id = {project_id:UInt64}
AND timestamp >= {since:DateTime64(6, 'UTC')}
AND timestamp < {until:DateTime64(6, 'UTC')}
AND (empty({severities:Array(String)}) OR severity IN {severities:Array(String)})
AND ({service:String} = '' OR service = {service:String})
AND ({environment:String} = '' OR environment = {environment:String})
AND ({release:String} = '' OR release = {release:String})
AND ({trace_id:String} = '' OR trace_id = {trace_id:String})
AND ({pattern:String} = '' OR search_text LIKE {pattern:String})
