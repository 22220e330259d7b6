"""Body decoding under limits: identity, gzip or zstd, decompressed as a stream so a bomb stops at the limit.

Each limit is a named constant with the reason for its value; the shipper's defaults (batchSize 100, lines
up to 1 MiB) sit far inside them.
"""

from __future__ import annotations

import zlib

import zstandard

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
SUPPORTED_ENCODINGS = ("identity", "gzip", "zstd")


class DecodeError(ValueError):
    """The body cannot be read; ``status`` is the HTTP answer (400, 413 or 415)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _too_large() -> DecodeError:
    return DecodeError(
        413,
        f"the decompressed body exceeds {MAX_DECOMPRESSED_BYTES // (1024 * 1024)} MiB; send smaller batches",
    )


def _gunzip(body: bytes) -> bytes:
    out = bytearray()
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    data = body
    try:
        while True:
            # max_length bounds each step, so a bomb never inflates past the limit in one call.
            out += inflater.decompress(data, _READ_CHUNK)
            if len(out) > MAX_DECOMPRESSED_BYTES:
                raise _too_large()
            data = inflater.unconsumed_tail
            if inflater.eof:
                if inflater.unused_data.strip(b"\x00"):
                    # Concatenated gzip members are valid gzip: keep going with the next member.
                    data = inflater.unused_data
                    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                    continue
                return bytes(out)
            if not data:
                raise DecodeError(400, "the gzip body is truncated")
    except zlib.error as exc:
        raise DecodeError(400, f"the body is not valid gzip: {exc}") from exc


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
        raise DecodeError(400, f"the body is not valid zstd: {exc}") from exc
    if body and not out:
        raise DecodeError(400, "the zstd body is truncated or empty")
    return bytes(out)


def decode_body(body: bytes, content_encoding: str | None) -> bytes:
    """The uncompressed body; raises :class:`DecodeError` with the status to answer."""
    if len(body) > MAX_BODY_BYTES:
        raise DecodeError(
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
        raise DecodeError(415, f"Content-Encoding {encoding!r} is not supported; use gzip, zstd or none")
    if not data.strip():
        raise DecodeError(400, "the body is empty; send one JSON log line per line")
    return data


def split_lines(data: bytes) -> list[bytes]:
    """Non-empty lines (``\\n`` or ``\\r\\n``); more than :data:`MAX_LINES` is a 413."""
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > MAX_LINES:
        raise DecodeError(
            413, f"the batch has {len(lines)} lines; at most {MAX_LINES} are accepted per batch"
        )
    return lines
