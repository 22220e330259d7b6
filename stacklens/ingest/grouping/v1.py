"""Grouping v1: which issue an error event belongs to.

Rules, first that applies wins (the rule name is the first component, so two rules never collide):

1. ``fingerprint`` sent by the SDK: its strings, ``{{ default }}`` expanded to what rules 2–4 give.
2. ``exception`` with frames: the raised exception's type + the crash site — the innermost in-app frame,
   as ``<module or file basename>:<function>:<context line>``. Line numbers never take part (they move with
   every edit above the crash), nor do the callers: the same bug reached through two views, a middleware
   chain of any depth or a recursion of any depth is one issue, while the same type raised in two
   functions is two.
3. ``exception`` without frames: type + the value with volatile parts (numbers, hex, UUIDs, e-mails, URLs,
   IPs, dates) replaced.
4. A message: the log template when the SDK kept it (``logentry.message``), else the normalised message.

The version is stored beside each fingerprint. This module is frozen: a change to grouping is a new module
(``v2.py``) registered in :mod:`stacklens.ingest.grouping`, so the issues v1 made keep their fingerprints;
``tests/stacklens/ingest/test_grouping_v1.py`` pins its output for recorded sentry-sdk payloads.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

GROUPING_VERSION = "v1"
DEFAULT_PLACEHOLDERS = frozenset({"{{ default }}", "{{default}}"})

# Order matters: URLs and e-mails before the numbers inside them, UUIDs before hex before plain numbers.
_VOLATILE = [
    (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+"), "<url>"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "<email>"),
    (
        re.compile(r"\b[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\b"),
        "<uuid>",
    ),
    (
        re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"),
        "<date>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<time>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])"), "<ip>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<num>"),
]
_MAX_COMPONENT = 512


@dataclass(frozen=True)
class Grouping:
    hash: str
    version: str = GROUPING_VERSION
    components: list[str] = field(default_factory=list)


def normalise_message(text: str) -> str:
    """Replace the parts of a message that differ between occurrences of one problem."""
    out = text.strip()
    for pattern, token in _VOLATILE:
        out = pattern.sub(token, out)
    return re.sub(r"\s+", " ", out)[:_MAX_COMPONENT]


def exception_values(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The exception chain in payload order (causes first, the raised one last); both Sentry shapes."""
    exc = payload.get("exception")
    if isinstance(exc, dict):
        exc = exc.get("values")
    if not isinstance(exc, list):
        return []
    return [item for item in exc if isinstance(item, dict)]


def frames_of(value: dict[str, Any]) -> list[dict[str, Any]]:
    """Frames outermost first, the crash site last (Sentry's order)."""
    stack = value.get("stacktrace")
    frames = stack.get("frames") if isinstance(stack, dict) else None
    return [f for f in frames if isinstance(f, dict)] if isinstance(frames, list) else []


def frame_label(frame: dict[str, Any]) -> str:
    """``<module or file basename>:<function>``: stable across checkouts, hosts and deploy paths."""
    where = frame.get("module")
    if not isinstance(where, str) or not where:
        filename = frame.get("filename") or frame.get("abs_path") or ""
        filename = str(filename).split("?", 1)[0].split("#", 1)[0]
        where = re.split(r"[\\/]", filename)[-1] if filename else "?"
        # Bundles carry a content hash (app.3f9a1c2b.js): the same code must group across deploys.
        where = re.sub(r"[.-][0-9a-f]{8,}(?=\.[A-Za-z0-9]+$)", "", where)
    return f"{where}:{frame.get('function') or '?'}"


def crash_site(frames: list[dict[str, Any]]) -> str | None:
    """The innermost in-app frame with its context line; frames marked ``in_app: false`` are vendor code.

    When no frame is flagged in-app (an SDK that sends no flags), the innermost frame not marked vendor
    is used, and failing that the innermost frame at all.
    """
    if not frames:
        return None
    pick = next((f for f in reversed(frames) if f.get("in_app") is True), None)
    pick = pick or next((f for f in reversed(frames) if f.get("in_app") is not False), None) or frames[-1]
    context = pick.get("context_line")
    context = re.sub(r"\s+", " ", context).strip()[:_MAX_COMPONENT] if isinstance(context, str) else ""
    return f"{frame_label(pick)}:{context}"


def collapse_repeats(labels: list[str]) -> list[str]:
    """Collapse consecutive repeats (recursion) so depth never changes what is stored or compared."""
    out: list[str] = []
    for label in labels:
        if not out or out[-1] != label:
            out.append(label)
    return out


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


def default_components(payload: dict[str, Any]) -> list[str]:
    """Rules 2–4 (what ``{{ default }}`` expands to)."""
    chain = exception_values(payload)
    if chain:
        raised = chain[-1]
        exc_type = str(raised.get("type") or raised.get("module") or "Error")[:_MAX_COMPONENT]
        # The raised exception's own frames; a re-raise without frames borrows the nearest cause's.
        site = next((crash_site(frames_of(v)) for v in reversed(chain) if frames_of(v)), None)
        if site is not None:
            return ["exception", exc_type, site]
        return ["exception-message", exc_type, normalise_message(str(raised.get("value") or ""))]
    message = _message(payload)
    if message:
        return ["message", normalise_message(message)]
    return ["empty", str(payload.get("level") or "error")]


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
