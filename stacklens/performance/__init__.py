"""Performance domain: filtered reads over the page-load and request fact tables, score, waterfall, recommendations."""
