-- Daily event counts of the listed issues over the shown days, for the list's sparklines.
SELECT issue_id, day, sum(events) AS events
FROM issue_facets_daily
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND issue_id IN {issue_ids:Array(UInt64)}
  AND day >= {since:Date}
  AND day <= {until:Date}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({level:String} = '' OR level = {level:String})
  AND ({service:String} = '' OR service = {service:String})
GROUP BY issue_id, day
ORDER BY issue_id, day
