"""Two events' stacks aligned as a diff aligns lines (the issue view's compare): frames are matched by
function and file, so a difference in recursion depth shows as the frames one event has and the other has
not — the identical library frames after it stay side by side instead of all reading as changed (issue 71)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from stacklens.issues.payload_exceptions import FrameView, exceptions
from stacklens.issues.payload_view import Payload

# Frames compared per event: a recursion's depth is seen long before this (the demo's recommendations recurse
# to a depth of at most ~40), and a page of 200 rows per side says nothing more.
COMPARED_FRAMES = 60
ABSENT = "—"  # a frame the other event has and this one has not

Line = tuple[str, str, str]  # (row label, first event's value, second event's value)


@dataclass
class AlignedStacks:
    """The aligned rows of the stack and of the frames' local variables, and how the alignment went."""

    stack: list[Line] = field(default_factory=list)
    local: list[Line] = field(default_factory=list)
    matched: int = 0  # frames in both events (same function and file), side by side
    changed: int = 0  # frames at the same place of the two stacks with another function or file
    only_first: int = 0  # frames of the first event skipped in the second (a deeper recursion, another path)
    only_second: int = 0

    @property
    def summary(self) -> str:
        """What the alignment did, in words (shown above the comparison)."""
        skipped = self.only_first + self.only_second
        if not skipped and not self.changed:
            return f"Frames aligned by function and file: all {self.matched} in both events."
        parts = [f"{self.matched} in both"]
        if self.changed:
            parts.append(f"{self.changed} changed")
        parts.append(
            f"{skipped} skipped ({self.only_first} only in the first event, {self.only_second} only in the second)"
        )
        return "Frames aligned by function and file: " + ", ".join(parts) + "."


def where(frame: FrameView) -> str:
    line = f":{frame['lineno']}" if frame["lineno"] is not None else ""
    return f"{frame['function']} ({frame['filename']}{line}){'' if frame['in_app'] else ' · vendor'}"


def _frames(payload: Payload) -> tuple[str, list[FrameView]]:
    chain = exceptions(payload)
    raised = chain[0] if chain else None
    if raised is None:
        return "", []
    text = f"{raised['type']}: {raised['value']}" if raised["value"] else raised["type"]
    return text, raised["frames"]


def _key(frame: FrameView) -> tuple[str, str]:
    return frame["function"], frame["filename"] or frame["module"]


def align(first: Payload, second: Payload) -> AlignedStacks:
    """The raised exceptions' frames (top first) of two events, aligned by function and file."""
    out = AlignedStacks()
    (text_a, all_a), (text_b, all_b) = _frames(first), _frames(second)
    out.stack.append(("exception", text_a, text_b))
    out.stack.append(("frames", str(len(all_a)) if text_a else "", str(len(all_b)) if text_b else ""))
    a, b = all_a[:COMPARED_FRAMES], all_b[:COMPARED_FRAMES]
    matcher = difflib.SequenceMatcher(a=[_key(f) for f in a], b=[_key(f) for f in b], autojunk=False)
    pairs: list[tuple[int | None, int | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
            out.matched += i2 - i1
            continue
        common = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs.extend((i1 + n, j1 + n) for n in range(common))
        out.changed += common
        pairs.extend((i, None) for i in range(i1 + common, i2))
        pairs.extend((None, j) for j in range(j1 + common, j2))
        out.only_first += (i2 - i1) - common
        out.only_second += (j2 - j1) - common
    for i, j in pairs:
        # Each event's own frame number: "#3 / #6" (the second event is three frames deeper), "— / #4".
        label = f"{ABSENT if i is None else f'#{i + 1}'} / {ABSENT if j is None else f'#{j + 1}'}"
        fa = a[i] if i is not None else None
        fb = b[j] if j is not None else None
        out.stack.append((label, where(fa) if fa else ABSENT, where(fb) if fb else ABSENT))
        function = (fa or fb or {"function": ""})["function"]
        vars_a, vars_b = dict(fa["vars"]) if fa else {}, dict(fb["vars"]) if fb else {}
        for name in dict.fromkeys([*vars_a, *vars_b]):
            out.local.append((f"{label} {function}: {name}", vars_a.get(name, ""), vars_b.get(name, "")))
    more_a, more_b = len(all_a) - len(a), len(all_b) - len(b)
    if more_a > 0 or more_b > 0:
        out.stack.append(
            (
                "more",
                f"{more_a} more frames" if more_a > 0 else "",
                f"{more_b} more frames" if more_b > 0 else "",
            )
        )
    return out
