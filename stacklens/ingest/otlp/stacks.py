"""``exception.stacktrace`` texts (OpenTelemetry's exception span events) read into Sentry stack frames.

OpenTelemetry sends a stack as the language prints it. Each format below is recognised by its frame lines;
the frames come back oldest first (the order of Sentry's ``stacktrace.frames``, and of Python's traceback),
so grouping reads them like the frames of any Sentry SDK. A text no parser recognises gives no frames: the
caller keeps it raw beside the event.

Formats: Python (``File "x.py", line 3, in f``), Java and other JVM languages (``at pkg.Cls.m(Cls.java:3)``),
JavaScript / Node (``at f (file.js:3:7)``), Go (``pkg.f(...)`` then ``\\t/path/x.go:3 +0x1d``) and .NET
(``at Ns.Cls.M() in C:\\x\\Cls.cs:line 3``).
"""

from __future__ import annotations

import re
from typing import Any

Frame = dict[str, Any]

_MAX_FRAMES = 250  # Sentry keeps at most 250 frames of a stack; an endless recursion prints thousands
_PYTHON = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in (?P<function>.+))?$')
_JAVA = re.compile(r"^\s*at (?P<function>[^\s(]+)\((?P<where>[^)]*)\)\s*$")
_JAVA_WHERE = re.compile(r"^(?P<file>[^:]+?)(?::(?P<line>\d+))?$")
_NODE = re.compile(r"^\s*at (?:async )?(?:(?P<function>.+?) \((?P<where>.+)\)|(?P<bare>\S+))\s*$")
_NODE_WHERE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_GO_FUNCTION = re.compile(r"^(?P<function>[\w./*()\-\[\]]+)\((?P<args>.*)\)$")
_GO_WHERE = re.compile(r"^\t(?P<file>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")
_DOTNET = re.compile(r"^\s*at (?P<function>.+?\(.*?\))(?: in (?P<file>.+):line (?P<line>\d+))?\s*$")


def parse_stack(text: str) -> list[Frame]:
    """The frames of ``text``, oldest first; ``[]`` when no known format matches."""
    lines = text.splitlines()
    for parser in (_python, _dotnet, _java, _node, _go):
        frames = parser(lines)
        if frames:
            return frames[-_MAX_FRAMES:]
    return []


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _python(lines: list[str]) -> list[Frame]:
    """A Python traceback: already oldest first, each ``File`` line followed by its source line. Chained
    exceptions print each traceback in turn; the last is the exception that was raised."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    lines = lines[starts[-1] :] if starts else lines
    frames: list[Frame] = []
    for index, line in enumerate(lines):
        match = _PYTHON.match(line)
        if not match:
            continue
        frame: Frame = {
            "filename": match["file"],
            "abs_path": match["file"],
            "module": _basename(match["file"]).removesuffix(".py"),
            "function": (match["function"] or "?").strip(),
            "lineno": _int(match["line"]),
        }
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if following.startswith("    ") and not _PYTHON.match(following):
            frame["context_line"] = following.strip()
        frames.append(frame)
    return frames


def _java(lines: list[str]) -> list[Frame]:
    """A JVM stack: innermost first, ``at package.Class.method(File.java:42)``; ``Caused by:`` sections
    after the first are the causes, left out (the frames are those of the exception that was thrown)."""
    frames: list[Frame] = []
    for line in lines:
        if line.startswith("Caused by:") and frames:
            break
        match = _JAVA.match(line)
        if not match:
            continue
        where = _JAVA_WHERE.match(match["where"])
        qualified = match["function"]
        module, _, function = qualified.rpartition(".")
        frame: Frame = {"function": function or qualified, "module": module}
        if where and where["file"] not in ("Native Method", "Unknown Source"):
            frame["filename"] = where["file"]
            frame["lineno"] = _int(where["line"])
        frames.append(frame)
    return frames[::-1]


def _node(lines: list[str]) -> list[Frame]:
    """A V8 stack: innermost first, ``at fn (file:line:col)`` or ``at file:line:col``."""
    frames: list[Frame] = []
    for line in lines:
        match = _NODE.match(line)
        if not match:
            continue
        where_text = match["where"] or match["bare"] or ""
        where = _NODE_WHERE.match(where_text)
        if not where:
            continue  # "at new Promise (<anonymous>)" and the like carry no place
        path = where["file"].removeprefix("file://")
        frames.append(
            {
                "function": match["function"] or "?",
                "filename": path,
                "abs_path": path,
                "lineno": _int(where["line"]),
                "colno": _int(where["col"]),
            }
        )
    return frames[::-1]


def _go(lines: list[str]) -> list[Frame]:
    """A Go panic stack: innermost first, a ``pkg.function(args)`` line followed by ``\\tfile.go:line``."""
    frames: list[Frame] = []
    for index, line in enumerate(lines[:-1]):
        function = _GO_FUNCTION.match(line.strip()) if not line.startswith("\t") else None
        where = _GO_WHERE.match(lines[index + 1])
        if not function or not where:
            continue
        qualified = function["function"]
        module, _, name = qualified.rpartition(".")
        frames.append(
            {
                "function": name or qualified,
                "module": module,
                "filename": where["file"],
                "abs_path": where["file"],
                "lineno": _int(where["line"]),
            }
        )
    return frames[::-1]


def _dotnet(lines: list[str]) -> list[Frame]:
    """A .NET stack: innermost first, ``at Ns.Class.Method(args) in path:line N`` (the place is optional)."""
    frames: list[Frame] = []
    for line in lines:
        match = _DOTNET.match(line)
        if not match or (" in " not in line and not line.strip().endswith(")")):
            continue
        signature = match["function"]
        qualified = signature.partition("(")[0]
        module, _, function = qualified.rpartition(".")
        frame: Frame = {"function": function or qualified, "module": module}
        if match["file"]:
            frame["filename"] = _basename(match["file"])
            frame["abs_path"] = match["file"]
            frame["lineno"] = _int(match["line"])
        frames.append(frame)
    # A JVM frame "at a.B.c(B.java:3)" also reads as a .NET signature: .NET is taken only with a file place.
    if not any("abs_path" in frame for frame in frames):
        return []
    return frames[::-1]
