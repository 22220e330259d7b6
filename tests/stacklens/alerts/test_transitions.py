"""One rule's step (stacklens/alerts/transitions.py): the thresholds a rule's states are decided with. The
steps themselves run in every evaluation tick (tests/stacklens/alerts/test_evaluation.py)."""

from __future__ import annotations

from stacklens.alerts.state import Thresholds
from stacklens.alerts.transitions import thresholds
from stacklens.control.models.alerts import AlertRule


def test_a_rules_thresholds_follow_its_type() -> None:
    budget = AlertRule(type="performance_budget", threshold=2500.0, warning_threshold=2000.0, min_samples=5)
    assert thresholds(budget) == Thresholds(threshold=2500.0, warning=2000.0, resolve=None, min_samples=5)
    # An event count needs no samples: one event in the window is a value.
    frequency = AlertRule(type="event_frequency", threshold=10.0, min_samples=5)
    assert thresholds(frequency).min_samples == 0
    # A crash-free rate fires below its threshold; a rule without one (a release regression) reads 0.
    crash = AlertRule(type="crash_free_rate", threshold=99.0, resolve_threshold=99.5, min_samples=1)
    assert thresholds(crash) == Thresholds(threshold=99.0, resolve=99.5, min_samples=1, below=True)
    assert thresholds(AlertRule(type="release_regression", threshold=None, min_samples=1)).threshold == 0.0
