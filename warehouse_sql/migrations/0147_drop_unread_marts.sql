-- The daily marts and the exact hourly quantile states under them, which no page, API, budget or alert reads: the
-- performance views, budgets, alert rules and their previews all read the page-load and request states of the
-- facts (`pageload_periods`, `pageload_examples`, `resource_request_periods`, `endpoint_call_periods`;
-- docs/performance.md), and the recommendations, weekly trends and release impact are computed per request from
-- those states for the filtered window. Building these tables cost every performance tick a second pass over the
-- raw rows of its hours (the hour states) and a rebuild of its days and weeks, for nobody.
DROP TABLE IF EXISTS page_metrics;

DROP TABLE IF EXISTS resource_breakdown;

DROP TABLE IF EXISTS resource_details;

DROP TABLE IF EXISTS api_endpoint_metrics;

DROP TABLE IF EXISTS weekly_trends;

DROP TABLE IF EXISTS release_impact;

DROP TABLE IF EXISTS recommendations;

DROP TABLE IF EXISTS page_hour_states;

DROP TABLE IF EXISTS resource_hour_states;

DROP TABLE IF EXISTS resource_detail_hour_states;

DROP TABLE IF EXISTS endpoint_hour_states
