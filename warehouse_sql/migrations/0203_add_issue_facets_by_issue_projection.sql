-- issue_facets_daily is sorted by day first, which suits the list (every issue over a range of days). The
-- reads of one page of issues (their distinct users and sparklines when a dimension is filtered) instead
-- want one issue's rows together: this projection keeps a copy sorted by issue, and the engine picks it for
-- those reads. AggregatingMergeTree allows projections only when merges rebuild them.
ALTER TABLE issue_facets_daily MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';

ALTER TABLE issue_facets_daily ADD PROJECTION IF NOT EXISTS by_issue
(
    SELECT * ORDER BY org_id, project_id, issue_id, day
);

-- Parts written before this migration get the projection in the background.
ALTER TABLE issue_facets_daily MATERIALIZE PROJECTION by_issue
