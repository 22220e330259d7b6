"""Body decoding under limits: identity, gzip or zstd, decompressed as a stream so a bomb stops at the limit.

Each limit is a named constant with the reason for its value; the shipper's defaults (batchSize 100, lines
up to 1 MiB) sit far inside them. Every decompression in the process, here and at the Sentry endpoints
(:mod:`stacklens.ingest.inflate`), takes one of a few slots first, so bombs sent at once cannot multiply
the memory one of them may take.
"""

from __future__ import annotations

import bisect
import hashlib
import mmap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import zstandard
from isal import isal_zlib

from stacklens.blocking import LOOP_INFLATE_BYTES, may_block, on_loop
from stacklens.errors import InvalidInput, TooLarge, Unavailable, UnsupportedEncoding

# isal's stub declares ``error`` as an exception instance; it is the class (igzip_lib.IsalError).
_GZIP_ERROR = cast("type[Exception]", isal_zlib.error)

# 10 MiB on the wire: a batch of 1,000 typical compressed events is ~1–2 MiB; beyond 10 the shipper should
# send smaller batches rather than hold a worker for seconds.
MAX_BODY_BYTES = 10 * 1024 * 1024
# 64 MiB decompressed: JSON compresses 5–20x, so a legitimate 10 MiB body stays under it, while a
# decompression bomb (1 MiB of zeros → 1 GiB) is cut off here before it can exhaust memory.
MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024
# 10,000 lines: ten times the largest batchSize in use (1,000); more is a misconfigured client.
MAX_LINES = 10_000
# 1 MiB per line: the SDK never writes a longer line (docs/architecture.md §11.1); a longer one is cut or
# corrupt.
MAX_LINE_BYTES = 1024 * 1024
# Integers beyond 64 bits fit no warehouse column and make Python's int() slow at 100k+ digits.
MAX_INT_DIGITS = 20

# 8 MiB: the largest zstd window a decoder must accept for HTTP (RFC 9659). A frame may ask for up to 128 MiB
# (the library's default ceiling), which the decoder would hold beside the output; the shipper's frames
# (level 3) use 2 MiB at most.
MAX_ZSTD_WINDOW_BYTES = 8 * 1024 * 1024
# Two decompressions at a time per process: each may hold up to MAX_DECOMPRESSED_BYTES (64 MiB) before it is
# cut off, so bombs arriving together hold at most 128 MiB. The codecs release the GIL, and two is the
# smallest host's core count: more at once would not finish sooner, only hold more memory. A legitimate
# batch inflates in a few milliseconds (~1 GB/s), so a slot is rarely waited for.
DECOMPRESSION_SLOTS = 2
# How long a body waits for a slot before it is answered 503 (retry). Even a bomb frees its slot within
# ~0.3 s (64 MiB inflated), so ten seconds of waiting means dozens of bombs queued ahead of it.
SLOT_WAIT_SECONDS = 10.0

_READ_CHUNK = 256 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_slots = threading.BoundedSemaphore(DECOMPRESSION_SLOTS)


class DecodeError(InvalidInput, ValueError):
    """The body cannot be read; ``status`` is the HTTP answer (400, 413 or 415), kept so a worker process can
    hand the failure back as plain data (:func:`decode_error` makes the same error again)."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)


class BodyTooLarge(DecodeError, TooLarge):
    status = 413


class EncodingNotSupported(DecodeError, UnsupportedEncoding):
    status = 415


def decode_error(status: int, message: str) -> DecodeError:
    """The decode error answering ``status``: too large (413), an unsupported encoding (415), else
    unreadable."""
    kind = {413: BodyTooLarge, 415: EncodingNotSupported}.get(status, DecodeError)
    return kind(message)


class DecompressionBusy(Unavailable):
    """Every decompression slot stayed taken for :data:`SLOT_WAIT_SECONDS` (answered 503: retry)."""


@contextmanager
def output_buffer(limit: int) -> Iterator[mmap.mmap]:
    """Room for up to ``limit`` + 1 inflated bytes, in an anonymous memory map of their own.

    Pages are taken only as they are written, and all are given back when the block ends, whatever still
    refers to the buffer: a refused body's traceback keeps its frames (and their locals) alive until the
    garbage collector finds the cycle, which would otherwise hold a bomb's 64 MiB for an unknown time.
    """
    with mmap.mmap(-1, limit + 1) as buffer:
        yield buffer


@contextmanager
def decompression_slot() -> Iterator[None]:
    """Hold one of the process's :data:`DECOMPRESSION_SLOTS` while decompressing; 503 after waiting too
    long."""
    # On the event loop (stacklens.blocking) a slot is taken only when one is free: waiting is for threads.
    if on_loop():
        if not _slots.acquire(blocking=False):
            may_block("a decompression slot")
    elif not _slots.acquire(timeout=SLOT_WAIT_SECONDS):
        raise DecompressionBusy(
            f"{DECOMPRESSION_SLOTS} compressed bodies are being decompressed already; retry in a few seconds"
        )
    try:
        yield
    finally:
        _slots.release()


def zstd_decompressor() -> zstandard.ZstdDecompressor:
    """A zstd decompressor that refuses frames asking for more than :data:`MAX_ZSTD_WINDOW_BYTES` of
    window."""
    return zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW_BYTES)


def _too_large() -> DecodeError:
    return decode_error(
        413,
        f"the decompressed body exceeds {MAX_DECOMPRESSED_BYTES // (1024 * 1024)} MiB; send smaller batches",
    )


def _gunzip(body: bytes) -> bytes:
    """Inflate with ISA-L (the zlib API, ~2.5x faster than zlib on NDJSON batches).

    One call per gzip member, its output bounded by what is left under the limit (``max_length``): a bomb
    stops there, and a normal batch inflates without intermediate buffers or re-sliced input.
    """
    parts: list[bytes] = []
    size = 0
    data = body
    # On the event loop (stacklens.blocking) a body inflates only so far; past that it goes to a thread.
    limit = LOOP_INFLATE_BYTES if on_loop() else MAX_DECOMPRESSED_BYTES
    try:
        while True:
            inflater = isal_zlib.decompressobj(wbits=16 + isal_zlib.MAX_WBITS)
            part = inflater.decompress(data, limit - size + 1)
            size += len(part)
            if size > limit:
                may_block(f"inflating more than {LOOP_INFLATE_BYTES // 1024} KiB")
                # Let go of the output first: the error's traceback keeps this frame alive until the
                # garbage collector runs, and with it up to 64 MiB.
                del part
                parts.clear()
                raise _too_large()
            parts.append(part)
            if not inflater.eof:
                raise decode_error(400, "the gzip body is truncated: it ends before its compressed data does")
            # Concatenated gzip members are valid gzip: go on with the next member. Zero padding after the
            # last member (some writers round up to a block) is ignored, as gzip(1) does.
            data = inflater.unused_data
            if not data.strip(b"\x00"):
                return parts[0] if len(parts) == 1 else b"".join(parts)
            if not data.startswith(_GZIP_MAGIC):
                raise decode_error(
                    400,
                    f"the gzip body has {len(data)} bytes of trailing data after its compressed data; "
                    "send the gzip output alone",
                )
    except _GZIP_ERROR as exc:
        raise decode_error(400, f"the body is not valid gzip: {exc}") from exc


def _unzstd(body: bytes) -> bytes:
    try:
        reader = zstd_decompressor().stream_reader(body, read_across_frames=True)
        with output_buffer(MAX_DECOMPRESSED_BYTES) as out:
            # Never more than one byte past the limit: a bomb stops there.
            while chunk := reader.read(min(_READ_CHUNK, MAX_DECOMPRESSED_BYTES + 1 - out.tell())):
                out.write(chunk)
                if out.tell() > LOOP_INFLATE_BYTES:
                    may_block(f"inflating more than {LOOP_INFLATE_BYTES // 1024} KiB")
                if out.tell() > MAX_DECOMPRESSED_BYTES:
                    raise _too_large()
            data = out[: out.tell()]
    except zstandard.ZstdError as exc:
        raise decode_error(400, f"the body is not valid zstd: {exc}") from exc
    if body and not data:
        raise decode_error(400, "the zstd body is truncated or empty")
    return data


def decode_body(body: bytes, content_encoding: str | None) -> bytes:
    """The uncompressed body; raises :class:`DecodeError` with the status to answer."""
    if len(body) > MAX_BODY_BYTES:
        raise decode_error(
            413, f"the body exceeds {MAX_BODY_BYTES // (1024 * 1024)} MiB; send smaller batches"
        )
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        data = body
    elif encoding in ("gzip", "x-gzip"):
        with decompression_slot():
            data = _gunzip(body) if body else b""
    elif encoding == "zstd":
        with decompression_slot():
            data = _unzstd(body) if body else b""
    else:
        raise decode_error(415, f'Content-Encoding "{encoding}" is not supported; use gzip, zstd or none')
    if not data or data.isspace():  # (not data.strip(): that copies a whole batch to look at its ends)
        raise decode_error(400, "the body is empty; send one JSON log line per line")
    return data


def body_digest(data: bytes) -> str:
    """The digest of a decoded body: a resend under the same Idempotency-Key must have the same one."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def split_lines(data: bytes) -> list[bytes]:
    """The lines (``\\n`` or ``\\r\\n``), a blank last one dropped; more than :data:`MAX_LINES` is a 413."""
    return split_part(data, 0, 1)[1]


def split_part(data: bytes, part: int, parts: int) -> tuple[int, list[bytes]]:
    """Share ``part`` of ``parts`` of the lines, and the number of its first line (1-based).

    Shares are cut by bytes at line starts, so each holds about as much text (the work of preparing a line
    grows with its length), and only the share's lines are copied out. Taken together the shares are
    exactly :func:`split_lines`' lines; the line limit is checked on the whole body whichever share is asked
    for.
    """
    starts, body_end = _line_starts(data)
    if len(starts) > MAX_LINES:
        total = data.count(b"\n") + (1 if data[data.rfind(b"\n") + 1 :].strip() else 0)
        raise decode_error(413, f"the batch has {total} lines; at most {MAX_LINES} are accepted per batch")
    first = 0 if part <= 0 else bisect.bisect_left(starts, part * len(data) // parts)
    last = len(starts) if part + 1 >= parts else bisect.bisect_left(starts, (part + 1) * len(data) // parts)
    # Each line ends where the next begins, less its newline; the last one where the body's lines end.
    ends = [start - 1 for start in starts[first + 1 : last + 1]]
    if last == len(starts) > first:
        ends.append(body_end)
    return first + 1, [data[start:end] for start, end in zip(starts[first:last], ends, strict=True)]


def _line_starts(data: bytes) -> tuple[list[int], int]:
    """Where each line begins (a blank last line is not one), and where the last line ends. Stops past
    :data:`MAX_LINES`.

    One ``find`` per line (memchr): ``bytes.count`` and ``bytes.split`` over a whole batch cost ~10x more.
    """
    starts = [0]
    find = data.find
    newline = find(b"\n")
    while newline != -1 and len(starts) <= MAX_LINES:
        starts.append(newline + 1)
        newline = find(b"\n", newline + 1)
    end = len(data)
    if newline == -1 and not data[starts[-1] :].strip():
        end = starts.pop() - 1  # what follows the last newline is blank: no line; the newline ends the last
    return starts, end
