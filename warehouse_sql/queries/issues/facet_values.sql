-- The values the list's filter menus offer: what the project has seen over the shown days.
SELECT
    groupUniqArrayIf(100)(toString(environment), environment != '') AS environments,
    groupUniqArrayIf(100)(toString(release), release != '') AS releases,
    groupUniqArrayIf(100)(toString(level), level != '') AS levels,
    groupUniqArrayIf(100)(toString(service), service != '') AS services
FROM issue_facets_daily
WHERE project_id = {project_id:UInt64}
  AND org_id = {org_id:UInt64}
  AND day >= {since:Date}
  AND day <= {until:Date}
