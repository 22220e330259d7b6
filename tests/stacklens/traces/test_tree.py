"""The tree of one trace: parents before children by start time, depths, orphans (a parent never received)
heading their own subtrees after the rooted tree, loops broken, duplicates read once, services named by the
source or the project, and the critical path walking back from the root's end."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.traces.tree import SpanRow, build_tree

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _span(sid: str, parent: str, start_ms: float, ms: float, service: str = "", project: int = 1) -> SpanRow:
    return SpanRow(
        span_id=sid,
        parent_span_id=parent,
        project_id=project,
        transaction_event_id="e",
        is_transaction=not parent,
        start_epoch_ms=int(T0.timestamp() * 1000 + start_ms),
        duration_ms=ms,
        op="op",
        description=sid,
        status="ok",
        status_code=0,
        service=service,
        release="",
        environment="",
    )


def test_tree_order_depths_orphans_and_services() -> None:
    rows = [
        _span("c2", "root", 50, 40, "api"),
        _span("root", "", 0, 100),
        _span("c1", "root", 10, 30, "api"),
        _span("g1", "c1", 12, 5, "db"),
        _span("lost", "never-sent", 20, 10, "mailer"),
        _span("lost-child", "lost", 22, 2, "mailer"),
        _span("c1", "root", 10, 30, "api"),  # a duplicate not merged yet
    ]
    tree = build_tree(rows, {1: "storefront"})
    assert tree is not None
    assert [s.span_id for s in tree.spans] == ["root", "c1", "g1", "c2", "lost", "lost-child"]
    assert [s.depth for s in tree.spans] == [0, 1, 2, 1, 0, 1]
    assert tree.roots == ["root"] and tree.orphans == ["lost"]
    assert [s.orphan for s in tree.spans] == [False, False, False, False, True, False]
    assert tree.spans[0].service == "storefront", "a span without a service is named by its project"
    assert tree.duration_ms == 100 and tree.start == T0


def test_critical_path_walks_back_from_the_end() -> None:
    # root 0-100: a (0-60) and b (10-95) overlap; b ends last, then c (0-8) ended before b began.
    rows = [
        _span("root", "", 0, 100),
        _span("a", "root", 0, 60),
        _span("b", "root", 10, 85),
        _span("c", "root", 0, 8),
        _span("b1", "b", 20, 70),
        _span("b2", "b", 15, 5),
    ]
    tree = build_tree(rows, {})
    assert tree is not None
    critical = {s.span_id for s in tree.spans if s.critical}
    assert critical == {"root", "b", "b1", "b2", "c"}


def test_a_loop_of_parents_is_broken_at_its_earliest_span() -> None:
    tree = build_tree([_span("x", "y", 5, 1), _span("y", "x", 1, 10)], {})
    assert tree is not None
    assert [s.span_id for s in tree.spans] == ["y", "x"] and tree.orphans == ["y"] and tree.roots == []


def test_no_rows_no_tree() -> None:
    assert build_tree([], {}) is None
