-- Distinct users of the issues on one page of the list, over the same days and dimensions as the list.
SELECT issue_id, uniqMerge(users) AS users
FROM
(
    SELECT issue_id, users
    FROM issue_totals_daily
    WHERE {environment:String} = '' AND {release:String} = '' AND {level:String} = ''
      AND {service:String} = ''
      AND project_id = {project_id:UInt64}
      AND org_id = {org_id:UInt64}
      AND day >= toDate({since:DateTime64(3, 'UTC')})
      AND day <= toDate({until:DateTime64(3, 'UTC')})
      AND issue_id IN {issue_ids:Array(UInt64)}
    UNION ALL
    SELECT issue_id, users
    FROM issue_facets_daily
    WHERE NOT ({environment:String} = '' AND {release:String} = '' AND {level:String} = ''
               AND {service:String} = '')
      AND project_id = {project_id:UInt64}
      AND org_id = {org_id:UInt64}
      AND day >= toDate({since:DateTime64(3, 'UTC')})
      AND day <= toDate({until:DateTime64(3, 'UTC')})
      AND issue_id IN {issue_ids:Array(UInt64)}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({level:String} = '' OR level = {level:String})
      AND ({service:String} = '' OR service = {service:String})
)
GROUP BY issue_id
