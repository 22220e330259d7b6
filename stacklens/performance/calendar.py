"""The days and ISO weeks of a window: every x position of a chart over time, so a day or week without samples
is drawn as what it is — a gap — rather than skipped over by a line that joins its neighbours (the pages'
plotly charts, the sparklines and the PDF report's line charts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta


def day_slots(since: datetime, until: datetime) -> list[str]:
    """Every UTC day the window [since, until) touches, as ISO dates, oldest first (an end at midnight is the
    previous day's end)."""
    first, last = since.date(), (until - timedelta(microseconds=1)).date()
    return [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]


def week_slots(since: datetime, until: datetime) -> list[str]:
    """Every ISO week (``2026-W05``) the window [since, until) touches, oldest first: the weekly views'
    keys."""
    out: list[str] = []
    for day in day_slots(since, until):
        year, week, _ = date.fromisoformat(day).isocalendar()
        label = f"{year}-W{week:02d}"
        if not out or out[-1] != label:
            out.append(label)
    return out


def fill(rows: Sequence[Mapping[str, object]], key: str, slots: list[str]) -> list[Mapping[str, object]]:
    """One row per slot, in slot order: the row whose ``key`` (as text) is the slot, else ``{key: slot}``
    alone (every value missing)."""
    by_key = {str(r[key]): r for r in rows}
    return [by_key.get(slot, {key: slot}) for slot in slots]
