"""The state machine of one rule and scope: ok / warning / firing / resolved / insufficient_data.

Threshold rules fire when the value goes **above** the threshold and stay firing until it falls to the resolve
threshold or below (hysteresis: a value hovering around the threshold does not flap). Too few samples is its
own state, ``insufficient_data``, which never fires and never claims a resolution. Notifications go out on
transitions only — into firing, from firing to resolved — plus an optional re-notification while firing.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Decision:
    state: str
    text: str  # plain words: "firing: 2,310 > 2,000"
    notify: str | None  # "firing" | "resolved" | "renotify" | None


def fmt(value: float | None, unit: str = "") -> str:
    """A value in its unit as the metric catalog writes it (``2,310.0 ms``, ``250.0 KiB``, ``3.4 %``, ``0.12``);
    any other unit names what is counted (``12 events``)."""
    if value is None:
        return "no data"
    known = units.BY_SYMBOL.get(unit)
    if known is not None:
        return units.format_in(known, value)
    return f"{units.format_in(units.COUNT, value)} {unit}"


def decide(
    previous: str,
    value: float | None,
    samples: int,
    t: Thresholds,
    unit: str = "",
    last_notified: datetime | None = None,
    renotify: timedelta | None = None,
    now: datetime | None = None,
) -> Decision:
    v, th = fmt(value, unit), fmt(t.threshold, unit)
    if value is None or samples < t.min_samples:
        return Decision(
            "insufficient_data", f"insufficient data: {samples} samples < {t.min_samples} needed", None
        )
    resolve = t.threshold if t.resolve is None else t.resolve
    if previous == "firing" and value > resolve:
        due = renotify and last_notified is not None and now is not None and now - last_notified >= renotify
        why = (
            f"still firing: {v} > {th}"
            if value > t.threshold
            else f"still firing: {v} > resolve {fmt(resolve, unit)}"
        )
        return Decision("firing", why, "renotify" if due else None)
    if value > t.threshold:
        return Decision("firing", f"firing: {v} > {th}", "firing")
    if previous == "firing":
        return Decision("resolved", f"resolved: {v} <= {fmt(resolve, unit)}", "resolved")
    if t.warning is not None and value > t.warning:
        return Decision("warning", f"warning: {v} > warning {fmt(t.warning, unit)} (threshold {th})", None)
    if previous == "resolved":
        return Decision("resolved", f"ok: {v} <= {th} (resolved earlier)", None)
    return Decision("ok", f"ok: {v} <= {th}", None)
