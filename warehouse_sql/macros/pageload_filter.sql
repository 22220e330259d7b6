-- The page-load filter of every performance view over `pageload_facts`: the organization's project, the window
-- [since, until) and the exact-match dimensions of stacklens/performance/filters.py (environment, release,
-- browser; page for a page's own views), each '' for "any". Used as `WHERE ${pageload_filter}`.
project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
AND ({environment:String} = '' OR environment = {environment:String})
AND ({release:String} = '' OR release = {release:String})
AND ({browser:String} = '' OR browser = {browser:String})
AND ({page:String} = '' OR page = {page:String})
