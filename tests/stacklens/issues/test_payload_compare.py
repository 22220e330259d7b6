"""Two events side by side (stacklens/issues/payload_compare.py): the stack's frames and local variables
line up."""

from __future__ import annotations

from stacklens.issues import payload_compare


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
    shallow = payload_compare.compare_view(_recursion(3, 5), no_columns)
    deep = payload_compare.compare_view(_recursion(6, 8), no_columns)
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
