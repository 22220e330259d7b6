"""Per-line checks: depth, long numbers, constants and encodings, with the messages clients see."""

from __future__ import annotations

import orjson
import pytest

from stacklens.ingest.jsondepth import MAX_JSON_DEPTH
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


def test_numbers_no_64_bit_type_holds_are_kept_as_written() -> None:
    """Never a silent change: what no 64-bit integer or double holds stays as its text, exactly."""
    for written in (
        "1" * 21,
        "18446744073709551616",  # 2**64: orjson would make it 1.8446744073709552e+19
        "-9223372036854775809",  # below Int64's minimum
        "9" * 5000,
        "1e400",  # beyond a double: orjson refuses it, the standard library made it Infinity → null
        "-1.5E+999",
    ):
        assert parse_line(_line(written.encode()), 1).payload["extra"] == written, written
    digits = "9" * 40
    assert parse_line(_line(f'"{digits}"'.encode()), 1).payload["extra"] == digits
    assert parse_line(_line(b"18446744073709551615"), 1).payload["extra"] == 18446744073709551615
    assert parse_line(_line(b"-9223372036854775808"), 1).payload["extra"] == -(2**63)
    # A line taking the exact path keeps its ordinary numbers as numbers.
    mixed = parse_line(_line(b'[1e400, 2.5, 7, "12345678901234567890123"]'), 1).payload["extra"]
    assert mixed == ["1e400", 2.5, 7, "12345678901234567890123"]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (b'"1"', '`v` must be the number 1, not the text "1"'),
        (b"true", "`v` must be the number 1, not the value true"),
        (b"null", "`v` must be the number 1, not the value null"),
        (b"2", "unsupported line version 2; this service reads version 1"),
    ],
)
def test_version_messages_spell_values_as_json(version: bytes, message: str) -> None:
    with pytest.raises(LineError) as caught:
        parse_line(b'{"v":' + version + b',"type":"event","payload":{}}', 1)
    assert str(caught.value) == message


def test_a_byte_order_mark_is_no_part_of_the_line() -> None:
    line = parse_line(b"\xef\xbb\xbf" + _line(b"1"), 1)
    assert line is not None and line.payload["extra"] == 1


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
