"""Performance domain: the page-load, resource and API-call views read from their state tables through the metrics
layer, the score, waterfalls, recommendations, budgets and the exports."""
