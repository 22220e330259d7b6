"""Performance domain: filtered reads over the raw page loads and spans, score, waterfall, recommendations."""
