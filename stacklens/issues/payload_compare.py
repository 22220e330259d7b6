"""Two events side by side (the issue view's compare): one event payload as sections of named values (its
stack's frames and local variables, the user, the environment and the tags) that line up with another's."""

from __future__ import annotations

from stacklens.issues.events import EventRow
from stacklens.issues.payload_exceptions import FrameView, exceptions
from stacklens.issues.payload_view import (
    EnvironmentInfo,
    Payload,
    UserInfo,
    as_dict,
    as_pairs,
    as_text,
    environment_info,
    request_data,
    user_info,
)


def _texts(view: UserInfo | EnvironmentInfo) -> dict[str, str]:
    """A view whose values are all text, as lines of the comparison."""
    return {key: str(value) for key, value in view.items()}


# Frames compared per event: a recursion's depth is seen long before this (the demo's recommendations recurse
# to a depth of at most ~40), and a page of 200 rows per side says nothing more.
COMPARED_FRAMES = 60


def _where(frame: FrameView) -> str:
    line = f":{frame['lineno']}" if frame["lineno"] is not None else ""
    return f"{frame['function']} ({frame['filename']}{line}){'' if frame['in_app'] else ' · vendor'}"


def _stack_sections(payload: Payload) -> dict[str, dict[str, str]]:
    """The raised exception's frames, top (where it occurred) first, row by row — so two events of one issue
    that reached the error through different call paths or recursion depths differ where they differ — and
    each frame's local variables under ``#n function: name``."""
    chain = exceptions(payload)
    raised = chain[0] if chain else None
    frames = raised["frames"] if raised else []
    stack: dict[str, str] = {}
    if raised:
        stack["exception"] = f"{raised['type']}: {raised['value']}" if raised["value"] else raised["type"]
        stack["frames"] = str(len(frames))
    for n, frame in enumerate(frames[:COMPARED_FRAMES], start=1):
        stack[f"#{n}"] = _where(frame)
    if len(frames) > COMPARED_FRAMES:
        stack[f"#{COMPARED_FRAMES + 1}…"] = f"{len(frames) - COMPARED_FRAMES} more frames"
    local: dict[str, str] = {}
    for n, frame in enumerate(frames[:COMPARED_FRAMES], start=1):
        for name, value in frame["vars"]:
            local[f"#{n} {frame['function']}: {name}"] = value
    return {"Stack trace": stack, "Local variables": local}


def compare_view(payload: Payload, row: EventRow) -> dict[str, dict[str, str]]:
    """Flat sections for the side-by-side comparison of two events: the stack trace frame by frame and the
    frames' local variables first (what tells two events of one issue apart), then request, user, environment
    and custom data."""
    request = request_data(payload)
    user = user_info(payload)
    return {
        **_stack_sections(payload),
        "Request": {
            "URL": request["url"] if request else "",
            "Method": request["method"] if request else "",
            **{f"Header {k}": v for k, v in (request["headers"] if request else [])},
            **{f"Query {k}": v for k, v in (request["query"] if request else [])},
            "Body": as_text(request["body"] if request else ""),
        },
        "User": _texts(user) if user else {},
        "Environment": {
            "environment": as_text(row.get("environment")),
            "release": as_text(row.get("release")),
            **_texts(environment_info(payload)),
        },
        "Custom data": {
            **{f"tag {k}": v for k, v in as_pairs(payload.get("tags"))},
            **{f"extra {k}": as_text(v) for k, v in as_dict(payload.get("extra")).items()},
        },
    }
