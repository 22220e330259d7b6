"""Compare two events (stacklens/issues/frame_alignment.py): frames aligned by function and file as a diff
aligns lines, so a difference in recursion depth is the frames one event has — never every frame after it."""

from __future__ import annotations

from typing import Any

from stacklens.issues.frame_alignment import ABSENT, align


def _event(depth: int, library: int = 27, value: str = "too deep") -> dict[str, Any]:
    """Top first as the page shows them: ``depth`` frames of a recursion over ``library`` vendor frames
    (sentry-python sends the outermost frame first)."""
    frames = [
        {"filename": f"lib/framework_{n}.py", "function": f"dispatch_{n}", "lineno": 10 + n, "in_app": False}
        for n in range(library)
    ]
    frames += [
        {
            "filename": "app/search.py",
            "function": "expand",
            "lineno": 40,
            "in_app": True,
            "vars": {"level": str(n)},
        }
        for n in range(depth)
    ]
    return {
        "platform": "python",
        "exception": {
            "values": [{"type": "RecursionError", "value": value, "stacktrace": {"frames": frames}}]
        },
    }


def test_a_deeper_recursion_is_the_frames_only_one_event_has() -> None:
    aligned = align(_event(3), _event(6))
    assert (aligned.matched, aligned.changed, aligned.only_first, aligned.only_second) == (30, 0, 0, 3)
    frames = aligned.stack[2:]
    assert len(frames) == 33
    library = [line for line in frames if "dispatch_" in line[1] or "dispatch_" in line[2]]
    assert len(library) == 27 and all(a == b for _, a, b in library)  # the 27 identical frames stay identical
    skipped = [line for line in frames if ABSENT in (line[1], line[2])]
    assert len(skipped) == 3 and all(a == ABSENT and "expand" in b for _, a, b in skipped)
    assert skipped[0][0].startswith(f"{ABSENT} / #")
    assert "3 skipped (0 only in the first event, 3 only in the second)" in aligned.summary
    # Local variables follow their aligned frames: the same recursion level side by side.
    assert ("#1 / #4 expand: level", "2", "2") in aligned.local and (
        "— / #1 expand: level",
        "",
        "5",
    ) in aligned.local


def test_the_same_stack_and_a_changed_frame() -> None:
    same = align(_event(4), _event(4, value="other"))
    assert (same.matched, same.only_first + same.only_second) == (31, 0)
    assert same.summary == "Frames aligned by function and file: all 31 in both events."
    other = _event(4)
    other["exception"]["values"][0]["stacktrace"]["frames"][5]["function"] = "dispatch_elsewhere"
    changed = align(_event(4), other)
    assert (changed.matched, changed.changed, changed.only_first, changed.only_second) == (30, 1, 0, 0)
    assert align({}, _event(1)).stack[0] == ("exception", "", "RecursionError: too deep")
