-- The daily issue counts, which no page, API, alert, budget, export or backup reads: the issue list's windows and
-- sparklines, the release pages and the alert measures read the insert-time daily tables (`issue_totals_daily`,
-- `issue_facets_daily`; migrations 0200-0202). Keeping them cost every minute's tick a rebuild of the days with
-- new events, every insert into `events` one more view block, and every crash repair one more comparison, for
-- nobody. The view goes first, so no insert feeds a table being dropped.
DROP VIEW IF EXISTS issue_daily_states_mv;

DROP TABLE IF EXISTS issue_daily_states;

DROP TABLE IF EXISTS issue_daily_counts
