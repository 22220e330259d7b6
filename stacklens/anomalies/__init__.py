"""Anomaly rules (docs/alerts.md, "Anomaly rules"): hourly series from the metrics layer (:mod:`.series`),
their expectation and band (:mod:`.model`), firing and resolution (:mod:`.decide`), the rule's fields
(:mod:`.rule_fields`), the backtest (:mod:`.backtest`) and the live tick's reading (:mod:`.live`)."""
