"""Performance: what the performance pages, their JSON API and their downloads show, and budgets.

- The views: the filters every view takes (:mod:`stacklens.view_filters`); the reads of page loads,
  resources and API endpoints (:mod:`.page_load_reads`, :mod:`.resource_reads`, :mod:`.endpoint_reads`),
  each from the minute-to-days states of its ``*_periods`` table that tile the window; the score and
  web-vital ratings (:mod:`.score`), the waterfall of one page load (:mod:`.waterfall`) and the
  recommendations; :mod:`.view_data` hands every face the same rows.
- One metric over a window (:mod:`.window_values`, at many times :mod:`.window_series`), read from the views'
  states: budgets and alert rules judge with it, so they give the views' numbers.
- Budgets: their definitions (:mod:`.budget_rules`), how one is judged (:mod:`.budget_eval`), a project's
  budgets with their status (:mod:`.budget_status`) and Lighthouse CI's ``budget.json``
  (:mod:`.lighthouse_budgets`).
- The downloads: CSV, JSON and the PDF report (:mod:`.exports`).

Metric keys, labels, units and how values are written come from the catalog, :mod:`stacklens.metrics`.
"""
