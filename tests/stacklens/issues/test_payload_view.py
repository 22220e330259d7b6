"""How a stored (scrubbed) event payload is shown: the exception chain, request, user, breadcrumbs, tags,
environment, the copy text and the two-event comparison."""

from __future__ import annotations

import json

from stacklens.issues import payload_view as pv
from tests.dashboards.landing import sdk_event


def _inner() -> None:
    raise KeyError("sku-17")


def _outer() -> None:
    try:
        _inner()
    except KeyError as exc:
        raise RuntimeError("checkout failed") from exc


def test_a_real_sdk_payload_is_shown_part_by_part() -> None:
    payload = sdk_event(
        _outer,
        user={"id": "u-1", "email": "ann@example.test"},
        tags={"tenant": "blue"},
        crumbs=[{"category": "http", "message": "GET /cart", "level": "info"}],
    )
    loaded = pv.load_payload(json.dumps(payload))
    assert loaded == payload and pv.load_payload("not json") == {} and pv.load_payload("") == {}

    chain = pv.exceptions(loaded)
    # The raised exception first, then its cause; each stack starts where the error occurred.
    assert [(c["type"], c["value"]) for c in chain] == [
        ("RuntimeError", "checkout failed"),
        ("KeyError", "'sku-17'"),
    ]
    assert chain[1]["frames"][0]["function"] == "_inner" and chain[0]["frames"][0]["function"] == "_outer"
    text = pv.copy_text(chain)
    assert "RuntimeError" in text and "checkout failed" in text and "_inner" in text

    assert pv.user_info(loaded) == {"id": "u-1", "email": "ann@example.test", "name": "", "ip_address": ""}
    no_columns: dict[str, str] = {}  # a row without environment or release: the payload's own tags
    assert ("tenant", "blue") in pv.tags(loaded, no_columns)
    crumbs = pv.breadcrumbs(loaded)
    assert any(c["message"] == "GET /cart" for c in crumbs)
    assert isinstance(pv.environment_info(loaded), dict)


def test_missing_or_malformed_parts_show_nothing_instead_of_failing() -> None:
    broken = {"exception": {"values": "nope"}, "user": 5, "breadcrumbs": [1, 2], "tags": "x", "request": []}
    assert pv.exceptions(broken) == []
    assert pv.user_info(broken) is None
    assert [c["message"] for c in pv.breadcrumbs(broken)] == ["", ""]
    assert pv.request_data(broken) is None
    assert pv.copy_text([]) == ""
    no_columns: dict[str, str] = {}
    view = pv.compare_view(broken, no_columns)
    assert isinstance(view, dict) and all(isinstance(v, dict) for v in view.values())


def _recursion(depth: int, limit: int) -> dict:
    """A Python event as sentry-python sends it: recommendations recursing ``depth`` times before failing."""
    frames = [
        {
            "filename": "demo_shop/app.py",
            "function": "recommendations",
            "lineno": 175,
            "in_app": True,
            "vars": {"user_id": "1001"},
        },
    ]
    frames += [
        {
            "filename": "demo_shop/search.py",
            "function": "expand",
            "lineno": 40,
            "in_app": True,
            "vars": {"level": str(level), "limit": str(limit)},
        }
        for level in range(depth)
    ]
    return {
        "platform": "python",
        "exception": {
            "values": [{"type": "RecursionError", "value": "too deep", "stacktrace": {"frames": frames}}]
        },
    }


def test_compare_shows_frames_and_local_variables() -> None:
    """Issue #47: the README's varying recursion depth could not be seen when comparing two events."""
    no_columns: dict[str, str] = {}
    shallow = pv.compare_view(_recursion(3, 5), no_columns)
    deep = pv.compare_view(_recursion(6, 8), no_columns)
    assert list(shallow)[:2] == ["Stack trace", "Local variables"]
    assert (shallow["Stack trace"]["frames"], deep["Stack trace"]["frames"]) == ("4", "7")
    assert shallow["Stack trace"]["exception"] == "RecursionError: too deep"
    assert shallow["Stack trace"]["#1"] == "expand (demo_shop/search.py:40)"
    assert "#7" in deep["Stack trace"] and "#7" not in shallow["Stack trace"]
    assert deep["Stack trace"]["#7"] == "recommendations (demo_shop/app.py:175)"
    assert (shallow["Local variables"]["#1 expand: limit"], deep["Local variables"]["#1 expand: limit"]) == (
        "5",
        "8",
    )
    assert deep["Local variables"]["#1 expand: level"] == "5"  # the top frame: the deepest level
