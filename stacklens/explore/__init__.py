"""Explore: analysts' own questions of the warehouse — a dataset, filters, up to three group-by fields and
aggregates of the metric catalog — built only from a validated spec into scoped, parameterised SQL."""
