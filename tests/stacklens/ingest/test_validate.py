"""Per-line checks: depth, long numbers, constants and encodings, with the messages clients see."""

from __future__ import annotations

import orjson
import pytest

from stacklens.ingest.decode import MAX_JSON_DEPTH
from stacklens.ingest.validate import LineError, parse_line


def _line(payload: bytes) -> bytes:
    return b'{"v":1,"type":"event","payload":{"extra":' + payload + b"}}"


def test_depth_limit_counts_structure_not_string_contents() -> None:
    inner = MAX_JSON_DEPTH - 2  # the envelope and payload objects are two levels
    assert parse_line(_line(b"[" * inner + b"]" * inner), 1) is not None
    with pytest.raises(LineError, match=f"deeper than {MAX_JSON_DEPTH}"):
        parse_line(_line(b"[" * (inner + 1) + b"]" * (inner + 1)), 1)
    brackets_in_a_string = _line(b'"' + b"[{" * 500 + b'"')
    assert parse_line(brackets_in_a_string, 1).payload["extra"] == "[{" * 500


def test_long_numbers_are_refused_but_long_digit_strings_are_kept() -> None:
    with pytest.raises(LineError, match="more than 20 digits"):
        parse_line(_line(b"1" * 21), 1)
    digits = "9" * 40
    assert parse_line(_line(f'"{digits}"'.encode()), 1).payload["extra"] == digits
    assert parse_line(_line(b"18446744073709551615"), 1).payload["extra"] == 18446744073709551615


def test_invalid_json_names_the_problem() -> None:
    with pytest.raises(LineError, match="NaN is not valid JSON"):
        parse_line(_line(b"NaN"), 3)
    with pytest.raises(LineError, match="not valid JSON"):
        parse_line(b'{"v":1,"type":"event","payload":{', 3)
    bad = _line(b'"\xff"')
    where = bad.index(b"\xff")
    with pytest.raises(LineError, match=rf"not valid UTF-8 \(byte {where}\)"):
        parse_line(bad, 3)


def test_lone_surrogates_are_replaced_so_the_event_can_be_stored() -> None:
    line = parse_line(_line(b'{"\\udc00k": "\\ud800x", "pair": "\\ud83d\\ude00"}'), 1)
    assert line is not None and line.payload["extra"] == {"?k": "?x", "pair": "\U0001f600"}
    orjson.dumps(line.payload)  # what ingest writes must encode


def test_alternating_brackets_count_one_level_each() -> None:
    half = MAX_JSON_DEPTH // 2  # {"a":[ … ]} pairs: two levels per repetition
    fits = b'{"a":[' * (half - 1) + b"1" + b"]}" * (half - 1)
    assert parse_line(_line(fits), 1) is not None
    too_deep = b'{"a":[' * half + b"1" + b"]}" * half
    with pytest.raises(LineError, match="deeper than"):
        parse_line(_line(too_deep), 1)


@pytest.mark.parametrize("depth", [1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 300])
def test_compiled_and_interpreted_depth_checks_agree(depth: int) -> None:
    """The compiled build counts depth in one loop, the interpreted one deletes pairs in rounds."""
    from stacklens.ingest.validate import _counted_ok, _rounds_ok

    for shape in ("[" * depth + "]" * depth, "[[][]" * depth + "]" * depth, "[]" * depth):
        assert _counted_ok(shape.encode()) == _rounds_ok(shape.encode()), shape[:20]
