"""Outcomes: what became of every item that reached an entrance, counted as Sentry counts them
(docs/architecture.md
§5)."""
