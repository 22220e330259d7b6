-- The columns a regroup's feed ({feed}: a view's own SELECT over the regrouped issues' events) answers.
DESCRIBE TABLE ({feed})
