"""Body decoding: gzip members and limits, and the line shares the ingest workers split a batch into."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stacklens.ingest.decode import MAX_LINES, DecodeError, decode_body, split_lines, split_part
from tests.stacklens.ingest.bombs import PeakGrowth, bomb


def reference_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    return lines


@given(
    st.lists(st.binary(max_size=8).map(lambda b: b.replace(b"\n", b"")), max_size=20),
    st.sampled_from([b"", b"\n", b"\n  ", b"\r\n"]),
    st.integers(min_value=1, max_value=5),
)
def test_shares_together_are_the_lines_with_their_numbers(
    lines: list[bytes], tail: bytes, parts: int
) -> None:
    data = b"\n".join(lines) + tail
    expected = reference_lines(data)
    assert split_lines(data) == expected
    joined: list[bytes] = []
    for part in range(parts):
        first, share = split_part(data, part, parts)
        if share:
            assert first == len(joined) + 1
        joined.extend(share)
    assert joined == expected


def test_shares_are_cut_by_bytes_at_line_ends() -> None:
    data = b"a" * 900 + b"\n" + b"b\n" * 100
    first, share = split_part(data, 0, 2)
    assert (first, share) == (1, [b"a" * 900])
    first, share = split_part(data, 1, 2)
    assert (first, len(share)) == (2, 100)


def test_the_line_limit_holds_for_every_share() -> None:
    data = b"{}\n" * (MAX_LINES + 1)
    for part in range(2):
        with pytest.raises(DecodeError) as refused:
            split_part(data, part, 2)
        assert refused.value.status == 413


def test_gzip_members_truncation_and_the_limit() -> None:
    assert decode_body(gzip.compress(b"a\n") + gzip.compress(b"b\n"), "gzip") == b"a\nb\n"
    assert decode_body(gzip.compress(b"a\n") + b"\0\0", "gzip") == b"a\n"
    with pytest.raises(DecodeError, match="truncated"):
        decode_body(gzip.compress(b"x" * 1000)[:-5], "gzip")
    with pytest.raises(DecodeError, match="not valid gzip"):
        decode_body(b"plain text", "gzip")
    with pytest.raises(DecodeError) as bomb:
        decode_body(gzip.compress(b"\0" * (65 * 1024 * 1024)), "gzip")
    assert bomb.value.status == 413
    with pytest.raises(DecodeError, match="empty"):
        decode_body(b"\n \n", None)


@pytest.mark.parametrize("coding", ["gzip", "zstd"])
def test_a_bomb_costs_the_limit_at_most(coding: str) -> None:
    """1 GiB of newlines (1 MB gzip, 32 KB zstd) stops at 64 MiB and a fraction of a second."""
    body = bomb(coding)
    with PeakGrowth() as peak, pytest.raises(DecodeError, match="exceeds 64 MiB") as refused:
        decode_body(body, coding)
    assert refused.value.status == 413
    assert peak.mib < 100, f"decoding the bomb took {peak.mib:.0f} MiB"
