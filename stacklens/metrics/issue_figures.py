"""The figures of an issue, each defined once: what the issue list, the issue page and its chart, the issues
API, release pages, alert rules, Explore and exports mean by an issue's events, users, first and last seen and
title.

- **Events in a window**: the issue's stored events with ``since <= timestamp < until``, the window being the
  one definition of :mod:`stacklens.metrics.windows` (a named range is rolling: ``14d`` is the last 14 days up
  to now, cut at whole minutes). Read by :func:`stacklens.issues.figures.window_figures` (the list's rows, the
  issue page, the API) and counted with the same edges by the issue chart, alert rules and Explore.
- **Users in a window**: distinct user keys (the first of user id, e-mail, username, IP) of those events;
  events without a user count none.
- **First seen / last seen**: the issue's own, over all its stored events, whatever window or filter a view
  shows (Sentry's users read the list's "First seen" as the issue's age).
- **Title** (and culprit): the title of the issue's latest own event — latest by event time, the event id
  breaking ties, the order in which the issue page lists events and opens on the newest (Sentry too names a
  group by its latest event). Its own events are those whose fingerprint gives this issue by itself: a merge's
  survivor keeps its name, whatever the fingerprints merged into it raise; an issue left with none of its own
  events is named by its latest event (warehouse migration 0270)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from stacklens.metrics.windows import describe


@dataclass(frozen=True)
class IssueFigure:
    key: str
    label: str
    description: str
    over_window: bool  # counted over the view's window (else the issue's own, all time)


FIGURES: dict[str, IssueFigure] = {
    f.key: f
    for f in (
        IssueFigure("events", "Events", "Stored events of the issue in the window.", True),
        IssueFigure("users", "Users", "Distinct users (id, e-mail, username or IP) of those events.", True),
        IssueFigure("first_seen", "First seen", "Time of the issue's first stored event (all time).", False),
        IssueFigure("last_seen", "Last seen", "Time of the issue's latest stored event (all time).", False),
        IssueFigure(
            "title",
            "Title",
            "Title of the issue's latest own event, not one merged in (event time, then event id; all time).",
            False,
        ),
    )
}


def column_label(key: str, range_name: str = "") -> str:
    """A column or figure heading: ``Events (14d)`` for a figure over a named range, ``First seen``
    otherwise."""
    figure = FIGURES[key]
    return f"{figure.label} ({range_name})" if figure.over_window and range_name else figure.label


def window_note(length: timedelta) -> str:
    """What a figure over a named range counts, for a heading's tooltip: ``last 14 days (rolling, to the
    minute)``."""
    return describe(length)
