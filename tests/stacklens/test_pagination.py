"""The one cursor codec: round trips, and every cursor it did not make for this list is refused alike."""

from __future__ import annotations

import base64

import pytest

from stacklens.errors import InvalidInput
from stacklens.pagination import InvalidCursor, decode_cursor, encode_cursor


def test_round_trip_is_url_safe_and_typed() -> None:
    cursor = encode_cursor(1234.5, 987654321, "last_seen")
    assert "=" not in cursor and "+" not in cursor and "/" not in cursor
    assert decode_cursor(cursor, float, int, str) == (1234.5, 987654321, "last_seen")
    # An int is a valid float position (a count sorted on), never the other way round.
    assert decode_cursor(encode_cursor(7, "e"), float, str) == (7, "e")


def _raw(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        "",
        _raw("not json"),
        _raw('{"a": 1}'),
        _raw("[1, 2]"),  # one part short
        _raw('[1.5, 2, "x", 4]'),  # one part too many
        _raw('[1.5, 2.5, "x"]'),  # the id is not an int
        _raw('[1.5, true, "x"]'),  # a boolean is not a position
        _raw('["1.5", 2, "x"]'),
        "%%%",
    ],
)
def test_anything_else_is_one_plain_refusal(cursor: str) -> None:
    with pytest.raises(
        InvalidCursor, match=r"^invalid cursor; pass the next_cursor of the previous page"
    ) as info:
        decode_cursor(cursor, float, int, str)
    # A domain input error: each adapter maps it once (400 in the API).
    assert isinstance(info.value, InvalidInput) and isinstance(info.value, ValueError)
