"""Content-Encoding stacks undone as bounded streams: every coding, bombs stopped one byte past the limit,
the first line read alone, and the process's decompression slots."""

from __future__ import annotations

import gzip
import mmap
import threading
import time
import zlib
from contextlib import AbstractContextManager

import brotli
import pytest
import zstandard

from stacklens.blocking import LOOP_INFLATE_BYTES, WouldBlock, loop_only
from stacklens.errors import Unavailable
from stacklens.ingest import decode
from stacklens.ingest.decode import DecodeError, decode_body, decompression_slot
from stacklens.ingest.inflate import DecodedBody, codings, decoded
from tests.stacklens.ingest.bombs import PeakGrowth, bomb

LIMIT = 64 * 1024 * 1024
TEXT = b'{"dsn": "http://key@host/1"}\n' + b'{"type": "event"}\n{"a": 1}\n' * 5_000

COMPRESS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("coding", sorted(COMPRESS))
def test_every_coding_reads_back(coding: str) -> None:
    assert decoded(COMPRESS[coding](TEXT), coding, LIMIT) == TEXT


def test_raw_deflate_stacked_codings_and_identity() -> None:
    raw_deflate = zlib.compress(TEXT)[2:-4]  # some clients send DEFLATE without the zlib wrapper
    assert decoded(raw_deflate, "deflate", LIMIT) == TEXT
    stacked = gzip.compress(brotli.compress(TEXT))  # br applied first, then gzip
    assert decoded(stacked, "br, gzip", LIMIT) == TEXT
    members = (
        gzip.compress(TEXT[:1000]) + gzip.compress(TEXT[1000:]) + b"\0" * 100_000
    )  # padded, as gzip(1) reads
    assert decoded(members, "x-gzip", LIMIT) == TEXT
    assert decoded(TEXT, "identity", LIMIT) == decoded(TEXT, None, LIMIT) == TEXT
    with pytest.raises(DecodeError, match="exceeds 1 KiB"):
        decoded(TEXT, None, 1024)
    assert codings("gzip, identity, br") == ["br", "gzip"]
    with pytest.raises(DecodeError, match="unsupported Content-Encoding 'compress'") as refused:
        codings("gzip, compress")
    assert refused.value.status == 415


@pytest.mark.parametrize("coding", ["gzip", "deflate", "deflate-raw", "br", "zstd"])
def test_a_bomb_stops_one_byte_past_the_limit(coding: str) -> None:
    body = bomb(coding)
    started = time.perf_counter()
    with (
        PeakGrowth() as peak,
        pytest.raises(DecodeError, match="decompressed envelope exceeds 64 MiB") as refused,
    ):
        decoded(body, "deflate" if coding == "deflate-raw" else coding, LIMIT, "envelope")
    assert refused.value.status == 413
    assert time.perf_counter() - started < 2.0, "64 MiB inflate in a fraction of a second"
    assert peak.mib < 100, f"the bomb took {peak.mib:.0f} MiB"


def test_the_first_line_is_read_alone() -> None:
    body = DecodedBody(brotli.compress(TEXT), "br", LIMIT)
    assert body.first_line(1024) == b'{"dsn": "http://key@host/1"}'
    assert body.rest() == TEXT.partition(b"\n")[2]
    # A bomb's first line is refused at its own limit, long before the body's.
    no_newline = zstandard.ZstdCompressor().compress(b"x" * (8 * 1024 * 1024))
    with pytest.raises(DecodeError, match="first line exceeds 64 KiB") as refused:
        DecodedBody(no_newline, "zstd", LIMIT).first_line(64 * 1024)
    assert refused.value.status == 413
    assert DecodedBody(bomb("br"), "br", LIMIT).first_line(64 * 1024) == b"{}"


@pytest.mark.parametrize("coding", sorted(COMPRESS))
def test_a_small_rest_is_returned_as_inflated_and_a_large_one_through_its_own_map(
    coding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rest that inflates in one piece (an envelope of a few KiB) maps no 64 MiB buffer; a rest of many
    pieces still does, and both read back exactly."""
    import stacklens.ingest.inflate as inflate

    maps: list[int] = []

    def counted(limit: int) -> AbstractContextManager[mmap.mmap]:
        maps.append(limit)
        return decode.output_buffer(limit)

    monkeypatch.setattr(inflate, "output_buffer", counted)
    small = DecodedBody(COMPRESS[coding](TEXT), coding, LIMIT)
    assert small.first_line(1024) == b'{"dsn": "http://key@host/1"}'
    assert small.rest() == TEXT.partition(b"\n")[2]
    assert maps == [], "one piece needs no map of its own"
    large_text = b'{"type": "event"}\n' + bytes(range(256)) * (12 * 1024)  # 3 MiB: several pieces
    large = DecodedBody(COMPRESS[coding](large_text), coding, LIMIT)
    assert large.first_line(1024) == b'{"type": "event"}'
    assert large.rest() == large_text.partition(b"\n")[2]
    assert maps == [LIMIT]
    header_only = DecodedBody(COMPRESS[coding](b"header only\n"), coding, LIMIT)
    assert header_only.first_line(1024) == b"header only"
    assert header_only.rest() == b""


def test_nothing_is_held_between_the_first_line_and_the_rest() -> None:
    """While a key is looked up, a body whose first line was read holds no decoder (a brotli window is
    4 MiB here, up to 16 MiB): twenty of them waiting hold next to nothing."""
    body = bomb("br")
    waiting = [DecodedBody(body, "br", LIMIT) for _ in range(20)]
    with PeakGrowth() as growth:
        assert all(one.first_line(64 * 1024) == b"{}" for one in waiting)
    assert growth.held < 20, f"twenty bodies between their two reads hold {growth.held:.0f} MiB"
    with pytest.raises(DecodeError, match="exceeds 64 MiB"):
        waiting[0].rest()  # and the rest is read afresh, past the first line


@pytest.mark.parametrize(
    ("coding", "body", "words"),
    [
        ("gzip", gzip.compress(TEXT, mtime=0)[:-100], "gzip body is truncated"),
        ("gzip", gzip.compress(TEXT, mtime=0) + b"trailing", "data after its compressed data"),
        ("gzip", gzip.compress(TEXT, mtime=0) + b"\0" * 100_000 + b"x", "data after its compressed data"),
        ("deflate", zlib.compress(TEXT)[:-100], "truncated"),
        ("br", brotli.compress(TEXT)[:-10], "truncated"),
        ("br", brotli.compress(TEXT) + b"junk", "not valid br"),
        ("zstd", b"not zstd at all", "not valid zstd"),
        ("gzip", b"plain text, not gzip", "not valid gzip"),
    ],
)
def test_broken_bodies_are_400(coding: str, body: bytes, words: str) -> None:
    with pytest.raises(DecodeError, match=words) as refused:
        decoded(body, coding, LIMIT)
    assert refused.value.status == 400


def test_zstd_frames_asking_for_a_window_over_8_mib_are_refused() -> None:
    # A streamed frame (no content size) declares its window: 128 MiB here, which the library would allocate.
    params = zstandard.ZstdCompressionParameters.from_level(1, window_log=27, write_content_size=False)
    compressor = zstandard.ZstdCompressor(compression_params=params).compressobj()
    wide = compressor.compress(TEXT) + compressor.flush()
    assert zstandard.get_frame_parameters(wide).window_size == 128 * 1024 * 1024
    assert zstandard.ZstdDecompressor().stream_reader(wide).read() == TEXT, "a valid frame"
    for read in (lambda: decoded(wide, "zstd", LIMIT), lambda: decode_body(wide, "zstd")):
        with pytest.raises(DecodeError, match="too much memory") as refused:
            read()
        assert refused.value.status == 400


def test_decompressions_wait_for_one_of_the_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bodies inflate at once; a third waits for a slot, and past the wait it is a 503."""
    assert decode.DECOMPRESSION_SLOTS == 2
    release = threading.Event()
    holding = threading.Barrier(3)

    def hold() -> None:
        with decompression_slot():
            holding.wait()
            release.wait(10)

    holders = [threading.Thread(target=hold) for _ in range(2)]
    for thread in holders:
        thread.start()
    holding.wait()
    monkeypatch.setattr(decode, "SLOT_WAIT_SECONDS", 0.2)
    with pytest.raises(Unavailable, match="2 compressed bodies are being decompressed already"):
        decoded(gzip.compress(TEXT), "gzip", LIMIT)
    assert decoded(TEXT, None, LIMIT) == TEXT, "an uncompressed body needs no slot"
    with pytest.raises(WouldBlock, match="a decompression slot"), loop_only():
        decoded(gzip.compress(TEXT), "gzip", LIMIT)  # on the event loop: never waits for a slot
    release.set()
    for thread in holders:
        thread.join()
    assert decoded(gzip.compress(TEXT), "gzip", LIMIT) == TEXT
    with loop_only():
        assert decoded(gzip.compress(TEXT), "gzip", LIMIT) == TEXT, "a free slot is taken on the loop too"


@pytest.mark.parametrize("coding", sorted(COMPRESS))
def test_on_the_event_loop_a_body_inflates_only_so_far_and_reads_whole_afterwards(coding: str) -> None:
    """Past LOOP_INFLATE_BYTES the read stops (the admission goes to a thread); read again, the same body
    gives its first line and its whole rest, not what was left of the stopped read."""
    large = b'{"dsn": "http://key@host/1"}\n' + b'{"type": "event"}\n' * (LOOP_INFLATE_BYTES // 8)
    body = DecodedBody(COMPRESS[coding](large), coding, LIMIT)
    with loop_only():
        body.first_line(64 * 1024)
        with pytest.raises(WouldBlock, match="inflating more than 256 KiB"):
            body.rest()
    first, _, rest = large.partition(b"\n")
    assert body.first_line(64 * 1024) == first
    assert body.rest() == rest
    with loop_only():
        small = DecodedBody(COMPRESS[coding](TEXT), coding, LIMIT)
        assert small.first_line(1024) + b"\n" + small.rest() == TEXT, "a body within it reads on the loop"


@pytest.mark.parametrize("coding", ["gzip", "zstd"])
def test_a_batch_body_on_the_event_loop_inflates_only_so_far(coding: str) -> None:
    large = b'{"type": "event"}\n' * (LOOP_INFLATE_BYTES // 8)
    with pytest.raises(WouldBlock, match="inflating more than 256 KiB"), loop_only():
        decode_body(COMPRESS[coding](large), coding)
    assert decode_body(COMPRESS[coding](large), coding) == large
