"""The INP part metrics: budgetable in ms at p75 by default, kept in `inp_periods` and `inp_interactions`,
and every one has the window source budgets, alert rules and their previews read
(stacklens/performance/window_values.py)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG, budget_metrics
from stacklens.metrics.interaction_metrics import INTERACTION_METRICS
from stacklens.performance.window_values import INP_PARTS, INTERACTIONS, SOURCES


def test_the_four_parts_are_budget_metrics_read_from_the_interactions() -> None:
    keys = [m.key for m in INTERACTION_METRICS][:4]
    assert keys == ["inp_input_delay_ms", "inp_processing_ms", "inp_presentation_ms", "inp_third_party_ms"]
    counted = CATALOG["inp_interactions"]  # the interactions themselves: counted (Explore), not budgeted
    assert counted.kind == "interactions" and counted.key not in budget_metrics() and counted.fixed_statistic
    for key in keys:
        metric = CATALOG[key]
        assert key in budget_metrics() and metric.unit.symbol == "ms" and metric.default_statistic == "p75"
        # The view's states (1 % log histograms: within the catalog's error), the interactions the rules read.
        assert [s.table for s in metric.states] == [
            "inp_periods",
            "inp_interactions",
        ] and metric.better == "lower"
        assert metric.error == 0.01
        assert SOURCES[key].kind == INTERACTIONS and set(metric.statistics) <= set(SOURCES[key].statistics)
    assert sorted(INP_PARTS) == sorted(keys) and sorted(INP_PARTS.values()) == [1, 2, 3, 4]
