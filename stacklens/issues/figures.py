"""An issue's figures over a window, read once for every face that shows them
(stacklens/metrics/issue_figures.py defines them): the issue list's rows, the issue page, the issues API and
release pages call :func:`window_figures`; the list's sort reads the same rows (macro ``issue_window_rows``).

The window's whole UTC days come from the insert-time daily tables, its partial edge days from the stored
events, so a rolling "14d" counts exactly the events of ``[since, until)`` while a list of every issue
still reads one row per issue and day for the days in between."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.metrics.windows import Window, ceil, floor
from stacklens.warehouse.queries import run_query

DAY = timedelta(days=1)


@dataclass(frozen=True)
class Dimensions:
    """Exact-match filters of an issue figure ('' = any)."""

    environment: str = ""
    release: str = ""
    level: str = ""
    service: str = ""


@dataclass(frozen=True)
class WindowFigures:
    """One issue's events and distinct users in a window."""

    events: int
    users: int


NONE = WindowFigures(0, 0)


def window_params(window: Window, dimensions: Dimensions = Dimensions()) -> dict[str, Any]:
    """The parameters of macro ``issue_window_rows``: the window, its whole days ``[day_start, day_end)``
    (both ``since`` when it holds none, so the events answer all of it) and the dimensions."""
    since, until = window.since, window.until
    day_start, day_end = ceil(since, DAY), floor(until, DAY)
    if day_end <= day_start:
        day_start = day_end = since
    naive = {k: v.replace(tzinfo=None) for k, v in {"day_start": day_start, "day_end": day_end}.items()}
    return {
        "since": since.replace(tzinfo=None),
        "until": until.replace(tzinfo=None),
        **naive,
        "environment": dimensions.environment,
        "release": dimensions.release,
        "level": dimensions.level,
        "service": dimensions.service,
    }


def window_figures(
    client: Client,
    org_id: int,
    project_id: int,
    window: Window,
    issue_ids: list[int],
    dimensions: Dimensions = Dimensions(),
) -> dict[int, WindowFigures]:
    """Events and distinct users of each of ``issue_ids`` in ``window`` with ``dimensions`` (issues without an
    event there are left out: :data:`NONE`)."""
    if not issue_ids:
        return {}
    rows = run_query(
        client,
        "issues/window_figures",
        {
            "org_id": org_id,
            "project_id": project_id,
            "issue_ids": sorted(set(issue_ids)),
            **window_params(window, dimensions),
        },
    )
    return {
        int(row["issue_id"]): WindowFigures(int(row["events"]), int(row["users"]))
        for row in rows
        if int(row["events"])
    }
