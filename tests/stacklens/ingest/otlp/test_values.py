"""OTLP attribute values → plain JSON values, trimmed and marked as Relay trims event data: text and lists too
long are cut, values nested too deep are dropped, and each cut is named; NaN and the infinities stay text."""

from __future__ import annotations

import json
import math

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList

from stacklens.ingest.otlp.values import MAX_DEPTH, MAX_ITEMS, MAX_VALUE_CHARS, Notes, attributes, value_of


def _nested(levels: int) -> AnyValue:
    """``{"a": {"a": … "leaf" …}}``: ``levels`` maps around a text."""
    value = AnyValue(string_value="leaf")
    for _ in range(levels):
        value = AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="a", value=value)]))
    return value


def test_text_and_lists_too_long_are_cut_and_named() -> None:
    notes = Notes()
    pairs = [
        KeyValue(key="note", value=AnyValue(string_value="x" * (MAX_VALUE_CHARS + 5))),
        KeyValue(
            key="ids",
            value=AnyValue(
                array_value=ArrayValue(values=[AnyValue(int_value=i) for i in range(MAX_ITEMS + 500)])
            ),
        ),
        KeyValue(key="raw", value=AnyValue(bytes_value=b"\x01\xff")),
        KeyValue(key="note", value=AnyValue(string_value="the second of a repeated key")),
    ]
    values = attributes(pairs, notes, "attributes")
    assert len(values["note"]) == MAX_VALUE_CHARS, "the first of repeated keys wins, cut"
    assert values["ids"] == list(range(MAX_ITEMS))
    assert values["raw"] == "01ff"
    assert notes.entries == [
        {"type": "value_too_long", "name": "attributes.note", "original_length": MAX_VALUE_CHARS + 5},
        {"type": "value_too_long", "name": "attributes.ids", "original_length": MAX_ITEMS + 500},
    ]


def test_values_nested_too_deep_are_dropped_at_the_limit_and_named() -> None:
    notes = Notes()
    kept = value_of(_nested(MAX_DEPTH), notes, "attributes.ok", 0)
    assert notes.entries == [] and json.dumps(kept).count("{") == MAX_DEPTH
    cut = value_of(_nested(MAX_DEPTH + 2), notes, "attributes.deep", 0)
    # Five levels are kept; what was below them is gone, and the cut is named with the path to it.
    assert json.dumps(cut) == '{"a": ' * MAX_DEPTH + "null" + "}" * MAX_DEPTH
    assert notes.entries == [
        {"type": "value_too_deep", "name": "attributes.deep" + ".a" * MAX_DEPTH, "max_depth": MAX_DEPTH}
    ]


def test_non_finite_numbers_stay_text_and_the_rest_as_sent() -> None:
    notes = Notes()
    values = [
        value_of(AnyValue(double_value=number), notes, "x", 0)
        for number in (math.nan, math.inf, -math.inf, 2.5)
    ]
    assert values == ["NaN", "Infinity", "-Infinity", 2.5]
    assert json.loads(json.dumps(values)) == values, "every value is valid JSON"
    assert value_of(AnyValue(bool_value=True), notes, "x", 0) is True
    assert value_of(AnyValue(int_value=-(2**63)), notes, "x", 0) == -(2**63)
    assert value_of(AnyValue(), notes, "x", 0) is None, "an empty value is null"
    assert notes.entries == []
