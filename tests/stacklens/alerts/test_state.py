from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stacklens.alerts.state import Thresholds, decide

T = Thresholds(threshold=2000, warning=1500, resolve=1800, min_samples=20)


def run(values: list[tuple[float | None, int]]) -> list[tuple[str, str | None]]:
    state, out = "insufficient_data", []
    for value, samples in values:
        d = decide(state, value, samples, T, "ms")
        state = d.state
        out.append((d.state, d.notify))
    return out


def test_hysteresis_warning_and_transitions_only() -> None:
    got = run(
        [(1000, 50), (1600, 50), (2100, 50), (2200, 50), (1900, 50), (1790, 50), (1900, 50), (2001, 50)]
    )
    assert got == [
        ("ok", None),
        ("warning", None),
        ("firing", "firing"),
        ("firing", None),
        ("firing", None),
        ("resolved", "resolved"),
        ("warning", None),
        ("firing", "firing"),
    ]


def test_insufficient_data_never_fires_and_never_resolves() -> None:
    got = run([(9999, 3), (2100, 50), (None, 0), (1000, 50)])
    assert got == [
        ("insufficient_data", None),
        ("firing", "firing"),
        ("insufficient_data", None),
        ("ok", None),
    ]
    assert "3 samples < 20" in decide("ok", 9999, 3, T).text


def test_renotify_interval_while_firing() -> None:
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    kwargs = {"renotify": timedelta(minutes=30), "now": now}
    assert decide("firing", 2500, 50, T, last_notified=now - timedelta(minutes=10), **kwargs).notify is None
    assert (
        decide("firing", 2500, 50, T, last_notified=now - timedelta(minutes=31), **kwargs).notify
        == "renotify"
    )
    assert (
        decide("firing", 2500, 50, T, last_notified=now - timedelta(hours=5)).notify is None
    )  # no interval set
    d = decide("ok", 2310, 50, T, "ms")
    assert d.text == "firing: 2,310.0 ms > 2,000.0 ms"


def test_a_rule_where_lower_is_worse_fires_below_warns_above_and_resolves_at_or_above() -> None:
    below = Thresholds(threshold=98, warning=99, resolve=98.5, min_samples=50, below=True)
    state, got = "insufficient_data", []
    for value, samples in [(90, 10), (99.5, 60), (98.7, 60), (97.9, 60), (98.2, 60), (98.5, 60), (99.9, 60)]:
        d = decide(state, value, samples, below, "%")
        state = d.state
        got.append((d.state, d.notify, d.text))
    assert got == [
        ("insufficient_data", None, "insufficient data: 10 samples < 50 needed"),  # 90 % on 10: never fires
        ("ok", None, "ok: 99.5 % >= 98.0 %"),
        ("warning", None, "warning: 98.7 % < warning 99.0 % (threshold 98.0 %)"),
        ("firing", "firing", "firing: 97.9 % < 98.0 %"),
        ("firing", None, "still firing: 98.2 % < resolve 98.5 %"),  # hysteresis, mirrored
        ("resolved", "resolved", "resolved: 98.5 % >= 98.5 %"),
        ("resolved", None, "ok: 99.9 % >= 98.0 % (resolved earlier)"),
    ]
    # The same values against the same numbers "above": the comparisons are mirrored, not shared.
    assert decide("ok", 97.9, 60, Thresholds(threshold=98, min_samples=50), "%").state == "ok"
    written = decide("ok", 99.95, 60, Thresholds(threshold=99.9, below=True), write=lambda v: f"{v:.2f} %")
    assert written.text == "ok: 99.95 % >= 99.90 %"


def test_a_count_of_one_is_singular_and_units_stay_the_catalogs() -> None:
    from stacklens.alerts.state import fmt

    assert fmt(1, "events") == "1 event" and fmt(2, "events") == "2 events"
    assert fmt(1, "users") == "1 user" and fmt(1_204, "events") == "1,204 events"
    assert fmt(2310, "ms") == "2,310.0 ms" and fmt(None, "events") == "no data"
