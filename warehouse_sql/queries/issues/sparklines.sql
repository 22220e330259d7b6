-- Daily event counts of the listed issues over the shown days, for the list's sparklines: from the daily
-- totals, or from the facets when a dimension is filtered (the other branch's constant condition is false).
SELECT issue_id, day, sum(events) AS events
FROM
(
    SELECT issue_id, day, events
    FROM issue_totals_daily
    WHERE {environment:String} = '' AND {release:String} = '' AND {level:String} = ''
      AND {service:String} = ''
      AND project_id = {project_id:UInt64}
      AND org_id = {org_id:UInt64}
      AND day >= {since:Date}
      AND day <= {until:Date}
      AND issue_id IN {issue_ids:Array(UInt64)}
    UNION ALL
    SELECT issue_id, day, events
    FROM issue_facets_daily
    WHERE NOT ({environment:String} = '' AND {release:String} = '' AND {level:String} = ''
               AND {service:String} = '')
      AND project_id = {project_id:UInt64}
      AND org_id = {org_id:UInt64}
      AND day >= {since:Date}
      AND day <= {until:Date}
      AND issue_id IN {issue_ids:Array(UInt64)}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({level:String} = '' OR level = {level:String})
      AND ({service:String} = '' OR service = {service:String})
)
GROUP BY issue_id, day
ORDER BY issue_id, day
