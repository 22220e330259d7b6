"""INP causes (docs/performance.md, "INP causes"): which interaction, which part of it, which script — first
party or third.

- :mod:`.hosts`: a project's own script hosts (``projects.first_party_hosts``), what makes a script first
  party beside the page's own host;
- :mod:`.reads`: the INP view — subparts p75 per page and target, scripts ranked by their share of blocking
  time, first- against third-party time per page, and the browsers that give no attribution;
- the catalog's INP part metrics over a window, for budgets, alert rules and their previews, are
  :mod:`stacklens.performance.window_values`' (kind ``interactions``), read as the view reads them.

All read ``inp_interactions`` (one row per reported interaction, the ``inp_interactions`` asset)."""
