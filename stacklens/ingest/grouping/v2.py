"""Grouping v2: v1's rules, plus the events of platforms v1 put into one untitled issue.

Found by feeding real events of many platforms (DESIGN §7.3): Java log events and native crashes carry their
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

Frozen once released, like v1: a change is ``v3.py``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import urlsplit

from stacklens.ingest.grouping.v1 import (
    DEFAULT_PLACEHOLDERS,
    Grouping,
    collapse_repeats,
    exception_values,
    frames_of,
    normalise_message,
)

GROUPING_VERSION = "v2"
_MAX_COMPONENT = 512
SECURITY_REPORTS = ("csp", "hpkp", "expectct", "expectstaple")

__all__ = ["GROUPING_VERSION", "collapse_repeats", "fingerprint_event", "stack_frames", "title_of"]


def frame_label(frame: dict[str, Any]) -> str:
    """``<module, file or package base name>:<function>``: stable across hosts, deploys and loads."""
    where = frame.get("module")
    if not isinstance(where, str) or not where:
        filename = frame.get("filename") or frame.get("abs_path") or ""
        filename = str(filename).split("?", 1)[0].split("#", 1)[0]
        if not filename and frame.get("package"):
            filename = str(frame["package"])
        where = re.split(r"[\\/]", filename)[-1] if filename else "?"
        where = re.sub(r"[.-][0-9a-f]{8,}(?=\.[A-Za-z0-9]+$)", "", where)
    function = frame.get("function") or frame.get("symbol") or "?"
    return f"{where}:{function}"


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
    if not frames:
        return None
    pick = next((f for f in reversed(frames) if f.get("in_app") is True), None)
    pick = pick or next((f for f in reversed(frames) if f.get("in_app") is not False), None) or frames[-1]
    context = pick.get("context_line")
    context = re.sub(r"\s+", " ", context).strip()[:_MAX_COMPONENT] if isinstance(context, str) else ""
    return f"{frame_label(pick)}:{context}"


def _message(payload: dict[str, Any]) -> str:
    logentry = payload.get("logentry")
    if isinstance(logentry, dict):
        template = logentry.get("message") or logentry.get("formatted")
        if isinstance(template, str) and template:
            return template
    message = payload.get("message")
    if isinstance(message, dict):
        message = message.get("message") or message.get("formatted")
    return message if isinstance(message, str) else ""


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
        exc_type = str(raised.get("type") or raised.get("module") or "Error")[:_MAX_COMPONENT]
        site = crash_site(stack_frames(payload))
        if site is not None:
            return ["exception", exc_type, site]
        return ["exception-message", exc_type, normalise_message(str(raised.get("value") or ""))]
    message = _message(payload)
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
    sdk = payload.get("fingerprint")
    if isinstance(sdk, list) and sdk and all(isinstance(p, str | int | float) for p in sdk):
        components: list[str] = ["fingerprint"]
        for part in sdk:
            text = str(part)
            components.extend(default_components(payload) if text.strip() in DEFAULT_PLACEHOLDERS else [text])
    else:
        components = default_components(payload)
    digest = hashlib.sha256("\x1f".join(components).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Grouping(hash=digest, version=GROUPING_VERSION, components=components)


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
