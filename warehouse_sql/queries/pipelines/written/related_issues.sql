-- The relations the related-issues run wrote (version {v}) and those it removed (`is_deleted`): its
-- materialization's figures.
SELECT countIf(is_deleted = 0), countIf(is_deleted = 1)
FROM related_issues
WHERE materialized_at = {v:DateTime64(6, 'UTC')}
