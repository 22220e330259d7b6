"""Outcomes: what became of every item that reached an entrance, counted as Sentry counts them (DESIGN
§9.1)."""
