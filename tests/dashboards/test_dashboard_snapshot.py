"""A dashboard's snapshot says when its answers were taken: the oldest answer's time (an answer kept by the
widget cache is up to a minute older than the page), the page's time when none was answered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dashboards.dashboard_snapshot import answers_as_of, snapshot_of
from stacklens.explore.widgets import WidgetAnswer

NOW = datetime(2026, 11, 26, 12, 0, 30, tzinfo=UTC)
WIDGET = {"title": "LCP p75", "kind": "number", "layout": {"x": 0, "y": 0, "w": 3, "h": 1}}


def _view(taken_at: datetime | None) -> dict[str, Any]:
    answer = WidgetAnswer(0, WIDGET, error="" if taken_at else "busy", taken_at=taken_at)
    return {"answer": answer, "layout": WIDGET["layout"], "columns": [], "figure": None}


def test_the_snapshot_is_as_of_its_oldest_answer() -> None:
    views = [_view(NOW - timedelta(seconds=45)), _view(NOW), _view(None)]
    assert answers_as_of(views) == NOW - timedelta(seconds=45)
    snapshot = snapshot_of("Vitals", "", {"range": "30d"}, views, NOW)
    assert snapshot["taken_at"] == "2026-11-26 11:59 UTC"


def test_with_no_answer_the_snapshot_is_as_of_the_page() -> None:
    assert answers_as_of([_view(None)]) is None
    assert (
        snapshot_of("Vitals", "", {"range": "30d"}, [_view(None)], NOW)["taken_at"] == "2026-11-26 12:00 UTC"
    )
