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


def test_a_compared_tables_changes_read_in_points_or_per_cent_and_tone_by_direction() -> None:
    from dashboards.dashboard_snapshot import table_changes
    from stacklens.explore.columns import compared_columns_of
    from stacklens.explore.query_parser import parse_query
    from stacklens.explore.run import Result

    body = {
        "dataset": "sessions",
        "range": "30d",
        "group_by": ["release"],
        "aggregates": [{"fn": "avg", "metric": "crash_free_sessions"}, {"fn": "count", "metric": "sessions"}],
        "compare": {"previous_period": True},
    }
    query = parse_query(body)
    columns = compared_columns_of(query)
    crash, sessions = (c.key for c in columns if c.kind == "aggregate")
    row = {
        "release": "1.4.0",
        crash: 99.9,
        f"{crash}_previous": 99.8,
        sessions: 90,
        f"{sessions}_previous": 100,
    }
    answer = WidgetAnswer(0, {**WIDGET, "kind": "table"}, query, Result([], [row]), taken_at=NOW)
    view = {
        "answer": answer,
        "layout": WIDGET["layout"],
        "columns": columns,
        "figure": None,
        "changes": table_changes(answer, columns),
    }
    (item,) = snapshot_of("Vitals", "", {"range": "30d"}, [view], NOW)["widgets"]
    headers = item["headers"]
    cells = dict(zip(headers, item["rows"][0], strict=True))
    tones = [t for t in item["tones"][0] if t]
    assert [h for h in headers if h == "Change"] == ["Change", "Change"]
    changes = [c for h, c in zip(headers, item["rows"][0], strict=True) if h == "Change"]
    assert changes == ["+0.1 pp", "-10.0 %"], cells  # points for the percentage, per cent for the count
    assert tones == ["good", "neutral"], tones  # fewer sessions is traffic, neither good nor bad


def test_release_markers_are_kept_with_the_widgets_answers(monkeypatch: Any) -> None:
    """A kept view reads no markers from the engine; another organization, environment or window length
    reads its own; the widget cache's TTL and clear() end them as they end the answers."""
    from dashboards import dashboard_snapshot
    from stacklens.explore.widget_cache import TTL_SECONDS, WidgetCache
    from stacklens.markers import RELEASE, Marker

    asked: list[tuple[int, str, timedelta]] = []

    def release_markers(
        client: Any, org_id: int, projects: dict[int, str], since: datetime, until: datetime, environment: str
    ) -> list[Marker]:
        asked.append((org_id, environment, until - since))
        return [Marker(since, RELEASE, "shop@1.0", "web", "shop@1.0")]

    monkeypatch.setattr(dashboard_snapshot, "release_markers", release_markers)
    clock = [1000.0]
    cache = WidgetCache(clock=lambda: clock[0])
    find = dashboard_snapshot.kept_release_markers(cache)
    day, web = timedelta(days=1), {1: "web"}
    engine: Any = None  # the stand-in release_markers reads no engine
    first = find(engine, 1, web, NOW - day, NOW, "")
    later = NOW + timedelta(seconds=30)  # the next minute's view: the same window length
    assert find(engine, 1, web, later - day, later, "") == first
    find(engine, 2, web, NOW - day, NOW, "")
    find(engine, 1, web, NOW - day, NOW, "production")
    find(engine, 1, web, NOW - 7 * day, NOW, "")
    assert asked == [(1, "", day), (2, "", day), (1, "production", day), (1, "", 7 * day)]
    clock[0] += TTL_SECONDS
    find(engine, 1, web, NOW - day, NOW, "")
    cache.clear()
    find(engine, 1, web, NOW - day, NOW, "")
    assert len(asked) == 6
