"""An event payload's exceptions for the issue view (:mod:`stacklens.issues.payload_view`): each exception of
the chain with its frames (in-app or not, the framework's frames named), and the chain as text to copy.
Like every accessor of a payload, they tolerate missing keys and wrong types."""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

from stacklens.ingest.grouping.v1 import frames_of
from stacklens.ingest.grouping.v2 import stack_frames
from stacklens.ingest.in_app import NO_RULES, InAppRules, frame_in_app
from stacklens.issues.payload_view import Payload, as_dict, as_list, as_text, message_text


class FrameView(TypedDict):
    """One frame as the page shows it (:func:`exceptions`)."""

    filename: str
    abs_path: str
    module: str
    package: str
    instruction_addr: str
    function: str
    lineno: int | None
    colno: int | None
    in_app: bool
    args: list[tuple[str, str]]
    vars: list[tuple[str, str]]
    pre_context: list[str]
    context_line: str | None
    post_context: list[str]
    # Set by stacklens.sourcemaps.symbolicate: the minified position and name of a frame a source map
    # resolved (and how it found the map), or why it could not.
    minified: NotRequired[str]
    minified_function: NotRequired[str]
    sourcemap_via: NotRequired[str]
    sourcemap_note: NotRequired[str]


class ExceptionView(TypedDict):
    """One exception of the chain with its frames, top (where it occurred) first."""

    type: str
    value: str
    frames: list[FrameView]


def _frame(frame: Payload, rules: InAppRules, platform: str) -> FrameView:
    """One frame as the page shows it, whatever the platform: a file (Python, JavaScript, .NET), a module
    (Java, Kotlin), or a package and an address (native, Cocoa). In-app or vendor as ingest infers it for
    the culprit (the SDK's flag, else where the code lives; the project's prefixes first)."""
    variables = as_dict(frame.get("vars"))
    package = as_text(frame.get("package"))
    where = frame.get("filename") or frame.get("abs_path") or frame.get("module")
    if not where and package:
        where = re.split(r"[\\/]", package)[-1]
    return {
        "filename": as_text(where or "?"),
        "abs_path": as_text(frame.get("abs_path")),
        "module": as_text(frame.get("module")),
        "package": package,
        "instruction_addr": as_text(frame.get("instruction_addr")),
        "function": as_text(frame.get("function") or frame.get("symbol") or "?"),
        "lineno": frame.get("lineno") if isinstance(frame.get("lineno"), int) else None,
        "colno": frame.get("colno") if isinstance(frame.get("colno"), int) else None,
        "in_app": frame_in_app(frame, rules, platform),
        "args": [(str(k), as_text(v)) for k, v in as_dict(frame.get("args")).items()],
        "vars": [(str(k), as_text(v)) for k, v in variables.items()],
        "pre_context": [as_text(x) for x in as_list(frame.get("pre_context"))],
        "context_line": as_text(frame.get("context_line")) if frame.get("context_line") is not None else None,
        "post_context": [as_text(x) for x in as_list(frame.get("post_context"))],
    }


def _frames(frames: list[Payload], rules: InAppRules, platform: str) -> list[FrameView]:
    """Top (where it occurred) first: Sentry lists the oldest call first."""
    return [_frame(f, rules, platform) for f in reversed(frames)]


def exceptions(payload: Payload, rules: InAppRules = NO_RULES) -> list[ExceptionView]:
    """The exception chain, the raised one first, each with frames top (where it occurred) first.

    An exception without frames shows the stack of the thread it was raised on (native crashes); an event
    without exception shows its message and the stack it carries (a thread's or a top-level one).
    ``rules`` are the project's in-app prefixes.
    """
    platform = as_text(payload.get("platform"))
    chain: list[ExceptionView] = []
    values = [as_dict(exc) for exc in as_list(payload.get("exception"))]
    for exc in reversed(values):
        frames = _frames(frames_of(exc), rules, platform)
        chain.append(
            {
                "type": as_text(exc.get("type") or "Error"),
                "value": as_text(exc.get("value")),
                "frames": frames,
            }
        )
    if chain and not any(item["frames"] for item in chain):
        chain[0]["frames"] = _frames(stack_frames(payload), rules, platform)
    if not chain:
        frames = _frames(stack_frames(payload), rules, platform)
        message = message_text(payload)
        if frames or message:
            chain.append(
                {"type": as_text(payload.get("level") or "message"), "value": message, "frames": frames}
            )
    return chain


def copy_text(chain: list[ExceptionView]) -> str:
    """Type, message and stack as plain text (the Copy error action)."""
    lines = []
    for exc in chain:
        lines.append(f"{exc['type']}: {exc['value']}")
        for frame in exc["frames"]:
            where = (
                f"{frame['filename']}:{frame['lineno']}" if frame["lineno"] is not None else frame["filename"]
            )
            lines.append(f"  at {frame['function']} ({where})")
    return "\n".join(lines)
