"""The state machine of one rule and scope: ok / warning / firing / resolved / insufficient_data.

Threshold rules fire when the value goes **above** the threshold and stay firing until it falls to the resolve
threshold or below (hysteresis: a value hovering around the threshold does not flap). A rule on a figure where
lower is worse (a crash-free rate, ``Thresholds.below``) is the mirror image: it fires below the threshold,
warns below the warning threshold (above the threshold) and resolves at or above the resolve threshold. Too
few samples is its own state, ``insufficient_data``, which never fires and never claims a resolution.
Notifications go out on transitions only — into firing, from firing to resolved — plus an optional
re-notification while firing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from stacklens.metrics import units

STATES = ("ok", "warning", "firing", "resolved", "insufficient_data")


@dataclass(frozen=True)
class Thresholds:
    threshold: float
    warning: float | None = None
    resolve: float | None = None  # None: the threshold itself
    min_samples: int = 1
    below: bool = False  # fires below the threshold (lower is worse), the comparisons mirrored


def _worse(value: float, limit: float, below: bool) -> bool:
    """Past ``limit`` on the bad side: above it, or below it for a ``below`` rule."""
    return value < limit if below else value > limit


@dataclass(frozen=True)
class Decision:
    state: str
    text: str  # plain words: "firing: 2,310 > 2,000"
    notify: str | None  # "firing" | "resolved" | "renotify" | None


def fmt(value: float | None, unit: str = "") -> str:
    """A value in its unit as the metric catalog writes it (``2,310.0 ms``, ``250.0 KiB``, ``3.4 %``,
    ``0.12``); any other unit names what is counted (``12 events``)."""
    if value is None:
        return "no data"
    known = units.BY_SYMBOL.get(unit)
    if known is not None:
        return units.format_in(known, value)
    count = units.format_in(units.COUNT, value)
    # One of a counted thing is singular: "1 event", "1 user" (the units here are plural nouns).
    return f"{count} {unit[:-1] if count == '1' and unit.endswith('s') else unit}"


def decide(
    previous: str,
    value: float | None,
    samples: int,
    t: Thresholds,
    unit: str = "",
    last_notified: datetime | None = None,
    renotify: timedelta | None = None,
    now: datetime | None = None,
    write: Callable[[float | None], str] | None = None,
) -> Decision:
    """The next state and what it says; ``write`` writes a value when ``fmt(value, unit)`` would not as the
    metric catalog does (a crash-free rate's two decimals: 99.95 % against 99.90 %)."""

    def show(number: float | None) -> str:
        return write(number) if write is not None else fmt(number, unit)

    v, th = show(value), show(t.threshold)
    worse, fine = ("<", ">=") if t.below else (">", "<=")
    if value is None or samples < t.min_samples:
        return Decision(
            "insufficient_data", f"insufficient data: {samples} samples < {t.min_samples} needed", None
        )
    resolve = t.threshold if t.resolve is None else t.resolve
    if previous == "firing" and _worse(value, resolve, t.below):
        due = renotify and last_notified is not None and now is not None and now - last_notified >= renotify
        why = (
            f"still firing: {v} {worse} {th}"
            if _worse(value, t.threshold, t.below)
            else f"still firing: {v} {worse} resolve {show(resolve)}"
        )
        return Decision("firing", why, "renotify" if due else None)
    if _worse(value, t.threshold, t.below):
        return Decision("firing", f"firing: {v} {worse} {th}", "firing")
    if previous == "firing":
        return Decision("resolved", f"resolved: {v} {fine} {show(resolve)}", "resolved")
    if t.warning is not None and _worse(value, t.warning, t.below):
        return Decision("warning", f"warning: {v} {worse} warning {show(t.warning)} (threshold {th})", None)
    if previous == "resolved":
        return Decision("resolved", f"ok: {v} {fine} {th} (resolved earlier)", None)
    return Decision("ok", f"ok: {v} {fine} {th}", None)
