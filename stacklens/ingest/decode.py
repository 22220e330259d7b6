"""Body decoding under limits: identity, gzip or zstd, decompressed as a stream so a bomb stops at the limit.

Each limit is a named constant with the reason for its value; the shipper's defaults (batchSize 100, lines
up to 1 MiB) sit far inside them.
"""

from __future__ import annotations

import bisect
import hashlib
from typing import cast

import zstandard
from isal import isal_zlib

from stacklens.errors import InvalidInput, TooLarge, UnsupportedEncoding

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
# 1 MiB per line: the SDK never writes a longer line (DESIGN §4.1); a longer one is cut or corrupt.
MAX_LINE_BYTES = 1024 * 1024
# 64 levels of JSON nesting: Sentry payloads need about 12; deeper is hostile (recursion in parsers).
MAX_JSON_DEPTH = 64
# Integers beyond 64 bits fit no warehouse column and make Python's int() slow at 100k+ digits.
MAX_INT_DIGITS = 20

_READ_CHUNK = 256 * 1024
_GZIP_MAGIC = b"\x1f\x8b"


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
    """The decode error answering ``status``: too large (413), an unsupported encoding (415), else unreadable."""
    kind = {413: BodyTooLarge, 415: EncodingNotSupported}.get(status, DecodeError)
    return kind(message)


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
    try:
        while True:
            inflater = isal_zlib.decompressobj(wbits=16 + isal_zlib.MAX_WBITS)
            part = inflater.decompress(data, MAX_DECOMPRESSED_BYTES - size + 1)
            size += len(part)
            if size > MAX_DECOMPRESSED_BYTES:
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
    out = bytearray()
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True)
        while True:
            chunk = reader.read(_READ_CHUNK)
            if not chunk:
                break
            out += chunk
            if len(out) > MAX_DECOMPRESSED_BYTES:
                raise _too_large()
    except zstandard.ZstdError as exc:
        raise decode_error(400, f"the body is not valid zstd: {exc}") from exc
    if body and not out:
        raise decode_error(400, "the zstd body is truncated or empty")
    return bytes(out)


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
        data = _gunzip(body) if body else b""
    elif encoding == "zstd":
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
