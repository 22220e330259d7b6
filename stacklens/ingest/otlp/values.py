"""OTLP attribute values (``AnyValue``) as plain JSON values, trimmed as Relay trims event data.

A value too long (text over :data:`MAX_VALUE_CHARS`, a list over :data:`MAX_ITEMS`) or nested too deep (past
:data:`MAX_DEPTH` levels of lists and maps) is cut, and the cut is recorded as a Relay-style ``errors`` entry
(``value_too_long`` / ``value_too_deep``, naming the attribute) on the payload the span becomes, so the stored
payload says it is not what was sent.
"""

from __future__ import annotations

import math
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

MAX_VALUE_CHARS = 8192  # the text limit of every stored payload field (stacklens.ingest.fields)
MAX_ITEMS = 1000  # items of one list or map value
MAX_DEPTH = 5  # levels of lists and maps inside one attribute value
MAX_ATTRIBUTES = 512  # attributes of one span, event or resource (the SDK's own default limit is 128)
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class Notes:
    """The trims made while reading one payload's values, as ``errors`` entries."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def add(self, kind: str, name: str, **detail: Any) -> None:
        if len(self.entries) < 100:
            self.entries.append({"type": kind, "name": name, **detail})


def attributes(pairs: Any, notes: Notes, where: str) -> dict[str, Any]:
    """``{key: value}`` of a repeated ``KeyValue`` field; the first of repeated keys wins (OTLP's rule)."""
    out: dict[str, Any] = {}
    for index, pair in enumerate(pairs):
        if index >= MAX_ATTRIBUTES:
            notes.add("value_too_long", where, original_length=len(pairs))
            break
        key = pair.key[:256]
        if key and key not in out:
            out[key] = value_of(pair.value, notes, f"{where}.{key}", 0)
    return out


def value_of(value: AnyValue, notes: Notes, name: str, depth: int) -> Any:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return _text(value.string_value, notes, name)
    if kind == "double_value" and not math.isfinite(value.double_value):
        # NaN and the infinities are not JSON numbers: kept as the OTLP JSON mapping writes them, as text,
        # so the span or record still lands (json would write a bare NaN that no reader parses).
        return _NON_FINITE[str(value.double_value)]
    if kind in ("bool_value", "int_value", "double_value"):
        return getattr(value, kind)
    if kind == "bytes_value":
        return _text(value.bytes_value.hex(), notes, name)
    if kind in ("array_value", "kvlist_value"):
        if depth >= MAX_DEPTH:
            notes.add("value_too_deep", name, max_depth=MAX_DEPTH)
            return None
        count = len(value.array_value.values) + len(value.kvlist_value.values)
        if count > MAX_ITEMS:
            notes.add("value_too_long", name, original_length=count)
        if kind == "array_value":
            return [
                value_of(item, notes, f"{name}[{i}]", depth + 1)
                for i, item in enumerate(value.array_value.values[:MAX_ITEMS])
            ]
        return {
            p.key[:256]: value_of(p.value, notes, f"{name}.{p.key[:64]}", depth + 1)
            for p in value.kvlist_value.values[:MAX_ITEMS]
        }
    return None


def _text(text: str, notes: Notes, name: str) -> str:
    if len(text) > MAX_VALUE_CHARS:
        notes.add("value_too_long", name, original_length=len(text))
        return text[:MAX_VALUE_CHARS]
    return text
