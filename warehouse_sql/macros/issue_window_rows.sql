-- Rows (issue_id, events, users) that together hold every event of a project's issues in the window
-- [{since}, {until}) with the dimension filters ('' = any): the window's whole UTC days [{day_start}, {day_end})
-- from the insert-time daily tables (issue_totals_daily, or issue_facets_daily when a dimension is filtered), its
-- partial edge days [{since}, {day_start}) and [{day_end}, {until}) from the stored events (projection
-- events_by_time unless the service is filtered). `users` are uniq states of the user key, merged by the reader
-- with uniqMerge. {issue_ids} limits the rows to those issues (empty: every issue). The branch whose constant
-- condition is false reads nothing. The one read of an issue's figures over a window (stacklens/issues/figures.py).
SELECT issue_id, events, users
FROM issue_totals_daily
WHERE {environment:String} = '' AND {release:String} = '' AND {level:String} = '' AND {service:String} = ''
  AND project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND day >= toDate({day_start:DateTime64(3, 'UTC')})
  AND day < toDate({day_end:DateTime64(3, 'UTC')})
  AND (length({issue_ids:Array(UInt64)}) = 0 OR issue_id IN {issue_ids:Array(UInt64)})
UNION ALL
SELECT issue_id, events, users
FROM issue_facets_daily
WHERE NOT ({environment:String} = '' AND {release:String} = '' AND {level:String} = '' AND {service:String} = '')
  AND project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND day >= toDate({day_start:DateTime64(3, 'UTC')})
  AND day < toDate({day_end:DateTime64(3, 'UTC')})
  AND (length({issue_ids:Array(UInt64)}) = 0 OR issue_id IN {issue_ids:Array(UInt64)})
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({level:String} = '' OR level = {level:String})
  AND ({service:String} = '' OR service = {service:String})
UNION ALL
SELECT issue_id, toUInt64(count()) AS events, uniqState(nullIf(user_key, '')) AS users
FROM events
WHERE {service:String} = ''
  AND project_id = {project_id:UInt64}
  AND ((timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {day_start:DateTime64(3, 'UTC')})
       OR (timestamp >= {day_end:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}))
  AND (length({issue_ids:Array(UInt64)}) = 0 OR issue_id IN {issue_ids:Array(UInt64)})
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({level:String} = '' OR level = {level:String})
GROUP BY issue_id
UNION ALL
SELECT issue_id, toUInt64(count()) AS events, uniqState(nullIf(user_key, '')) AS users
FROM events
WHERE {service:String} != ''
  AND project_id = {project_id:UInt64}
  AND ((timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {day_start:DateTime64(3, 'UTC')})
       OR (timestamp >= {day_end:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}))
  AND (length({issue_ids:Array(UInt64)}) = 0 OR issue_id IN {issue_ids:Array(UInt64)})
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({level:String} = '' OR level = {level:String})
  AND service = {service:String}
GROUP BY issue_id
