"""Grouping v2: v1's rules, plus the events of platforms v1 put into one untitled issue.

Found by feeding real events of many platforms (docs/architecture.md §11.4): Java log events and native
crashes carry their
stack under ``threads`` (or a top-level ``stacktrace``), not under ``exception``; browsers send CSP, HPKP and
Expect-CT reports with neither exception nor message; some SDKs send minimal events. v1 grouped all of these
into one ``empty`` issue across platforms. v2 gives each its own grouping, first rule that applies wins:

1. ``fingerprint`` sent by the SDK, ``{{ default }}`` expanded to what rules 2–7 give (as v1).
2. ``exception``: the raised type + the crash site; when the exception has no frames, the frames of the
   thread it was raised on (``thread_id``), else of the crashed or current thread (v1 fell back to the
   value).
3. ``exception`` with no frames anywhere: type + the normalised value (as v1).
4. A message: the log template (``logentry.message``), else the normalised message (as v1).
5. A stack without exception or message (``threads`` or ``stacktrace``): the crash site of that stack.
6. A security report: ``csp`` by effective directive and blocked host; ``hpkp`` / ``expectct`` /
   ``expectstaple`` by host name.
7. Nothing of that: platform, logger and level (never one issue across platforms).

Frame labels also read native and JVM frames: ``module``, else the file's base name, else the ``package``'s
base name (a shared library); never an instruction address, which moves with every load (ASLR).

Frozen once released, like v1, and made of the same frozen blocks (:mod:`stacklens.ingest.grouping.blocks`):
a change is ``v3.py``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from stacklens.ingest.grouping.blocks import MAX_COMPONENT as _MAX_COMPONENT
from stacklens.ingest.grouping.blocks import (
    Grouping,
    collapse_repeats,
    exception_values,
    fingerprint_with,
    frames_of,
    message_template,
    module_file_or_package_label,
    normalise_message,
    raised_type,
)
from stacklens.ingest.grouping.blocks import crash_site as _crash_site

GROUPING_VERSION = "v2"
SECURITY_REPORTS = ("csp", "hpkp", "expectct", "expectstaple")

__all__ = ["GROUPING_VERSION", "collapse_repeats", "fingerprint_event", "stack_frames", "title_of"]


frame_label = module_file_or_package_label


def _thread_frames(payload: dict[str, Any], thread_id: Any = None) -> list[dict[str, Any]]:
    """Frames of the thread ``thread_id``, else of the crashed thread, else of the current one."""
    threads = payload.get("threads")
    if isinstance(threads, dict):
        threads = threads.get("values")
    if not isinstance(threads, list):
        return []
    threads = [t for t in threads if isinstance(t, dict) and frames_of(t)]
    for wanted in (
        lambda t: thread_id is not None and t.get("id") == thread_id,
        lambda t: t.get("crashed") is True,
        lambda t: t.get("current") is True,
    ):
        chosen = next((t for t in threads if wanted(t)), None)
        if chosen is not None:
            return frames_of(chosen)
    return frames_of(threads[0]) if len(threads) == 1 else []


def stack_frames(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The frames that describe where the event happened, outermost first: the exception's (or the thread
    it was raised on), else a thread's, else a top-level ``stacktrace``."""
    chain = exception_values(payload)
    for value in reversed(chain):
        if frames_of(value):
            return frames_of(value)
    raised = chain[-1] if chain else {}
    frames = _thread_frames(payload, raised.get("thread_id"))
    if frames:
        return frames
    return frames_of({"stacktrace": payload.get("stacktrace")})


def crash_site(frames: list[dict[str, Any]]) -> str | None:
    """The innermost in-app frame (else not marked vendor, else innermost) with its context line."""
    return _crash_site(frames, frame_label)


def _host(uri: Any) -> str:
    """The host of a blocked URI (``inline``, ``eval`` and ``data`` kept as they are)."""
    text = str(uri or "").strip()
    if text in ("", "self", "'self'", "inline", "eval", "data", "blob"):
        return text or "self"
    try:
        return urlsplit(text).hostname or text.split(":", 1)[0]
    except ValueError:
        return text[:_MAX_COMPONENT]


def security_report(payload: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(kind, what, host)`` of a CSP / HPKP / Expect-CT / Expect-Staple report, else ``None``."""
    for kind in SECURITY_REPORTS:
        report = payload.get(kind)
        if isinstance(report, dict):
            if kind == "csp":
                directive = report.get("effective_directive") or report.get("violated_directive") or ""
                directive = str(directive).split(" ", 1)[0]
                return kind, directive[:_MAX_COMPONENT], _host(report.get("blocked_uri"))[:_MAX_COMPONENT]
            return kind, "", _host(report.get("hostname") or report.get("host"))[:_MAX_COMPONENT]
    return None


def default_components(payload: dict[str, Any]) -> list[str]:
    """Rules 2–7 (what ``{{ default }}`` expands to)."""
    chain = exception_values(payload)
    if chain:
        raised = chain[-1]
        site = crash_site(stack_frames(payload))
        if site is not None:
            return ["exception", raised_type(raised), site]
        return ["exception-message", raised_type(raised), normalise_message(str(raised.get("value") or ""))]
    message = message_template(payload)
    if message:
        return ["message", normalise_message(message)]
    site = crash_site(stack_frames(payload))
    if site is not None:
        return ["stacktrace", site]
    report = security_report(payload)
    if report is not None:
        return ["security", *report]
    return [
        "empty",
        str(payload.get("platform") or "other")[:64],
        str(payload.get("logger") or "")[:_MAX_COMPONENT],
        str(payload.get("level") or "error")[:32],
    ]


def fingerprint_event(payload: dict[str, Any]) -> Grouping:
    """The grouping of one error event (payload as the SDK sent it)."""
    return fingerprint_with(payload, default_components, GROUPING_VERSION)


_REPORT_TITLES = {
    "hpkp": "HPKP violation for {host}",
    "expectct": "Expect-CT failure for {host}",
    "expectstaple": "Expect-Staple failure for {host}",
}


def title_of(payload: dict[str, Any], exc_type: str, exc_value: str, message: str) -> str:
    """The issue's title: never empty, whatever the event carries (Sentry's titles where it has one)."""
    if exc_type:
        return f"{exc_type}: {exc_value}" if exc_value else exc_type
    if message:
        return message.split("\n", 1)[0]
    report = security_report(payload)
    if report is not None:
        kind, what, host = report
        if kind == "csp":
            return f"Blocked '{what or 'resource'}' from '{host}'"
        return _REPORT_TITLES[kind].format(host=host)
    frames = stack_frames(payload)
    if frames:
        site = next((f for f in reversed(frames) if f.get("in_app") is True), frames[-1])
        where, _, function = frame_label(site).rpartition(":")
        return f"Stack trace: {function} in {where}"
    platform = str(payload.get("platform") or "other")
    level = str(payload.get("level") or "error")
    logger = str(payload.get("logger") or "")
    return f"{platform} {level} event" + (f" from {logger}" if logger else "")
