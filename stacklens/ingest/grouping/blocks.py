"""The frozen building blocks the grouping versions are made of.

A released version (``v1.py``, ``v2.py``, …) is a composition of these blocks: which rules apply in which
order, which frame label and which message a component takes. A block never changes once a version uses it,
since every issue that version made keeps its fingerprint only while the block gives the same text; a new
behaviour is a new block beside the old one (``module_or_file_label`` and ``module_file_or_package_label``
are two such), used by the next version. ``tests/stacklens/ingest/grouping/`` pins each version's output
for recorded payloads."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_PLACEHOLDERS = frozenset({"{{ default }}", "{{default}}"})
MAX_COMPONENT = 512

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
# A bundle's content hash (app.3f9a1c2b.js): the same code must group across deploys.
_BUNDLE_HASH = re.compile(r"[.-][0-9a-f]{8,}(?=\.[A-Za-z0-9]+$)")

FrameLabel = Callable[[dict[str, Any]], str]
Components = Callable[[dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Grouping:
    hash: str
    version: str
    components: list[str] = field(default_factory=list)


def normalise_message(text: str) -> str:
    """Replace the parts of a message that differ between occurrences of one problem."""
    out = text.strip()
    for pattern, token in _VOLATILE:
        out = pattern.sub(token, out)
    return re.sub(r"\s+", " ", out)[:MAX_COMPONENT]


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


def collapse_repeats(labels: list[str]) -> list[str]:
    """Collapse consecutive repeats (recursion) so depth never changes what is stored or compared."""
    out: list[str] = []
    for label in labels:
        if not out or out[-1] != label:
            out.append(label)
    return out


def _without_query(filename: str) -> str:
    return filename.split("?", 1)[0].split("#", 1)[0]


def _base_name(path: str) -> str:
    where = re.split(r"[\\/]", path)[-1] if path else "?"
    return _BUNDLE_HASH.sub("", where)


def module_or_file_label(frame: dict[str, Any]) -> str:
    """``<module or file basename>:<function>``: stable across checkouts, hosts and deploy paths (v1)."""
    where = frame.get("module")
    if not isinstance(where, str) or not where:
        where = _base_name(_without_query(str(frame.get("filename") or frame.get("abs_path") or "")))
    return f"{where}:{frame.get('function') or '?'}"


def module_file_or_package_label(frame: dict[str, Any]) -> str:
    """``<module, file or package base name>:<function or symbol>``: also native and JVM frames, never an
    instruction address, which moves with every load (v2)."""
    where = frame.get("module")
    if not isinstance(where, str) or not where:
        filename = _without_query(str(frame.get("filename") or frame.get("abs_path") or ""))
        if not filename and frame.get("package"):
            filename = str(frame["package"])
        where = _base_name(filename)
    function = frame.get("function") or frame.get("symbol") or "?"
    return f"{where}:{function}"


def crash_site(frames: list[dict[str, Any]], label: FrameLabel) -> str | None:
    """The innermost in-app frame with its context line; frames marked ``in_app: false`` are vendor code.

    When no frame is flagged in-app (an SDK that sends no flags), the innermost frame not marked vendor
    is used, and failing that the innermost frame at all.
    """
    if not frames:
        return None
    pick = next((f for f in reversed(frames) if f.get("in_app") is True), None)
    pick = pick or next((f for f in reversed(frames) if f.get("in_app") is not False), None) or frames[-1]
    context = pick.get("context_line")
    context = re.sub(r"\s+", " ", context).strip()[:MAX_COMPONENT] if isinstance(context, str) else ""
    return f"{label(pick)}:{context}"


def message_template(payload: dict[str, Any]) -> str:
    """The log template when the SDK kept it (``logentry.message``), else the message as sent; '' for none."""
    logentry = payload.get("logentry")
    if isinstance(logentry, dict):
        template = logentry.get("message") or logentry.get("formatted")
        if isinstance(template, str) and template:
            return template
    message = payload.get("message")
    if isinstance(message, dict):
        message = message.get("message") or message.get("formatted")
    return message if isinstance(message, str) else ""


def raised_type(raised: dict[str, Any]) -> str:
    """The raised exception's type as a component (its module when the SDK sent no type)."""
    return str(raised.get("type") or raised.get("module") or "Error")[:MAX_COMPONENT]


def fingerprint_with(payload: dict[str, Any], default_components: Components, version: str) -> Grouping:
    """The grouping of an event: the SDK's ``fingerprint`` with ``{{ default }}`` expanded to the version's
    own components, else those components; the hash is the first 32 hex digits of their SHA-256."""
    sdk = payload.get("fingerprint")
    if isinstance(sdk, list) and sdk and all(isinstance(p, str | int | float) for p in sdk):
        components: list[str] = ["fingerprint"]
        for part in sdk:
            text = str(part)
            components.extend(default_components(payload) if text.strip() in DEFAULT_PLACEHOLDERS else [text])
    else:
        components = default_components(payload)
    digest = hashlib.sha256("\x1f".join(components).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Grouping(hash=digest, version=version, components=components)
