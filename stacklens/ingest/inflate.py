"""``Content-Encoding`` stacks (gzip, deflate, br, zstd) undone as bounded streams: the Sentry endpoints'
bodies.

Each coding is a reader over the one below it that never inflates more than it is asked for, so the whole
stack stops one byte past the limit whatever the compression ratio: a 1.6 KB brotli body that would inflate
to 1 GiB costs 64 MiB and a fraction of a second, then a 413. :class:`DecodedBody` also reads just the first
line, so an envelope whose key is in its header is authenticated before the rest is inflated.
"""

from __future__ import annotations

import io
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any, Protocol, cast

import brotli
import zstandard
from isal import isal_zlib

from stacklens.blocking import LOOP_INFLATE_BYTES, may_block
from stacklens.ingest.decode import (
    DecodeError,
    decode_error,
    decompression_slot,
    output_buffer,
    zstd_decompressor,
)

CODINGS = ("gzip", "x-gzip", "deflate", "br", "zstd")
# isal's stub declares ``error`` as an exception instance; it is the class (igzip_lib.IsalError).
_ISAL_ERROR = cast("type[Exception]", isal_zlib.error)
_GZIP_MAGIC = b"\x1f\x8b"
# Compressed input is fed in 64 KiB pieces and inflated output taken in 1 MiB pieces: small enough that the
# limit is checked often, large enough that a 64 MiB body takes 64 calls.
_IN_CHUNK = 64 * 1024
_OUT_CHUNK = 1024 * 1024
_FIRST_PIECE = 1024  # the first read of a body's first line; each next read is four times larger


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def codings(content_encoding: str | None) -> list[str]:
    """The codings of ``Content-Encoding`` in the order to undo them (the last applied first, RFC 9110
    §8.4); 415 for one this service does not read."""
    named = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    for coding in named:
        if coding != "identity" and coding not in CODINGS:
            raise decode_error(
                415, f"unsupported Content-Encoding {coding!r}; send gzip, deflate, br or zstd"
            )
    return [c for c in reversed(named) if c != "identity"]


class DecodedBody:
    """A request body read as it inflates; more than ``limit`` bytes of it is a 413.

    Each of :meth:`first_line` and :meth:`rest` inflates holding a decompression slot
    (:func:`~stacklens.ingest.decode.decompression_slot`) until it returns, so what the slots bound is the
    memory of the decompressions under way. Between the two (while a key is looked up) nothing is held: the
    first line's decoders are dropped (a brotli window alone may be 16 MiB), and :meth:`rest` inflates the
    body afresh, passing over the first line again (at most 64 KiB).
    """

    def __init__(self, body: bytes, content_encoding: str | None, limit: int, what: str = "body") -> None:
        self._body = body
        self._layers = codings(content_encoding)
        self._limit = limit
        self._what = what
        self._stream: _Reader | None = None  # opened on the first read
        self._taken = 0
        self._skip = 0  # bytes of the first line (and its newline) that rest() passes over

    def _open(self) -> _Reader:
        stream: _Reader = io.BytesIO(self._body)
        for coding in self._layers:
            stream = _decoder(stream, coding)
        return stream

    def first_line(self, max_bytes: int) -> bytes:
        """The body up to its first ``\\n`` (excluded); 413 past ``max_bytes`` without one."""
        buffer = bytearray()
        self._stream, self._taken = None, 0  # from the start, even after a read stopped half-way
        # Inflated a little at a time: a header is a few hundred bytes, and inflating the whole first 64 KiB
        # of a typical event for it (then again in rest()) was a fifth of an envelope's admission.
        piece = _FIRST_PIECE
        with self._slot():
            while b"\n" not in buffer and len(buffer) <= max_bytes:
                chunk = self._read(min(piece, max_bytes + 1 - len(buffer)))
                if not chunk:
                    break
                buffer += chunk
                piece = min(piece * 4, _IN_CHUNK)
        line, newline, _ = bytes(buffer).partition(b"\n")
        if len(line) > max_bytes:
            raise decode_error(413, f"the {self._what}'s first line exceeds {_size(max_bytes)}")
        self._skip = len(line) + len(newline)
        self._stream, self._taken = None, 0  # the decoders that read it go now
        return line

    def rest(self) -> bytes:
        """What follows the first line (the whole body when no line was read)."""
        # Afresh, even after a read stopped half-way (stacklens.blocking: a read on the event loop that went
        # past what the loop inflates is read again on a thread).
        self._stream, self._taken = None, 0
        if not self._layers:  # nothing to inflate: the body as sent, within the limit
            return self._read(self._limit + 1)[self._skip :]
        with self._slot():
            skip = self._skip
            while skip and (passed := self._read(min(skip, _OUT_CHUNK))):
                skip -= len(passed)
            # A rest of at most one piece's size (nearly every envelope: a few KiB) is joined as it comes:
            # mapping (and unmapping) 64 MiB of address space for it cost more than inflating it. A larger
            # one goes on into a map of its own (see output_buffer).
            pieces: list[bytes] = []
            size = 0
            while size <= _OUT_CHUNK:
                chunk = self._read(_OUT_CHUNK)
                if not chunk:
                    return b"".join(pieces)
                pieces.append(chunk)
                size += len(chunk)
            with output_buffer(self._limit) as out:
                for piece in pieces:
                    out.write(piece)
                del pieces
                while chunk := self._read(_OUT_CHUNK):
                    out.write(chunk)
                return out[: out.tell()]

    def _slot(self) -> AbstractContextManager[None]:
        return decompression_slot() if self._layers else nullcontext()

    def _read(self, size: int) -> bytes:
        # One byte past the limit is enough to know it is passed: never inflate more than that.
        want = min(size, self._limit + 1 - self._taken)
        if want <= 0:
            raise self._too_large()
        if self._taken > LOOP_INFLATE_BYTES:
            may_block(f"inflating more than {LOOP_INFLATE_BYTES // 1024} KiB")
        if self._stream is None:
            self._stream = self._open()
        try:
            chunk = self._stream.read(want)
        except DecodeError:
            raise
        except (_ISAL_ERROR, brotli.error, zstandard.ZstdError) as exc:
            # Each codec has its own error type; all mean the same to the sender.
            raise decode_error(
                400, f"the {self._what} is not valid {'+'.join(self._layers)}: {exc}"
            ) from None
        self._taken += len(chunk)
        if self._taken > self._limit:
            raise self._too_large()
        return chunk

    def _too_large(self) -> DecodeError:
        return decode_error(413, f"the decompressed {self._what} exceeds {_size(self._limit)}")


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


def _decoder(source: _Reader, coding: str) -> _Reader:
    if coding == "zstd":
        return zstd_decompressor().stream_reader(cast("IO[bytes]", source), read_across_frames=True)
    if coding == "br":
        return _Brotli(source)
    return _Inflate(source, coding)


class _Exact:
    """Hands out at most ``size`` bytes per read of what a codec produced (it may produce more)."""

    def __init__(self) -> None:
        self._out = b""

    def _take(self, out: bytes, size: int) -> bytes:
        if size < 0 or len(out) <= size:
            return out
        self._out = out[size:]
        return out[:size]

    def _pending(self, size: int) -> bytes:
        out, self._out = self._out, b""
        return self._take(out, size)


class _Brotli(_Exact):
    """brotli, with the output of each call bounded (``output_buffer_limit``, brotli ≥ 1.2)."""

    def __init__(self, source: _Reader) -> None:
        super().__init__()
        self._source = source
        self._inflater = brotli.Decompressor()
        self._exhausted = False  # the source has no more input

    def read(self, size: int = -1, /) -> bytes:
        if self._out:
            return self._pending(size)
        limit = _OUT_CHUNK if size < 0 else max(size, 1)
        while not self._inflater.is_finished():
            data = b""
            if self._inflater.can_accept_more_data() and not self._exhausted:
                data = self._source.read(_IN_CHUNK)
                self._exhausted = not data
            # Without input, the decoder hands out what it holds; nothing at all means it needs more.
            out = self._inflater.process(data, output_buffer_limit=limit)
            if out:
                return self._take(out, size)
            if self._exhausted:
                raise decode_error(400, "the br body is truncated: it ends before its compressed data does")
        if not self._exhausted and self._source.read(1):
            raise decode_error(400, "the br body has data after its compressed data")
        return b""


class _Inflate(_Exact):
    """gzip (every member, zero padding after the last ignored, as gzip(1) does) or HTTP "deflate"
    (zlib-wrapped by the spec, raw DEFLATE by some clients: both are read), inflated with ISA-L (the zlib
    API, ~6x faster than zlib on these bodies: a bomb reaches the limit in ~30 ms)."""

    def __init__(self, source: _Reader, coding: str) -> None:
        super().__init__()
        self._source = source
        self._coding = coding
        self._gzip = coding in ("gzip", "x-gzip")
        self._inflater: Any = None
        self._done = False

    def read(self, size: int = -1, /) -> bytes:
        if self._out:
            return self._pending(size)
        limit = _OUT_CHUNK if size < 0 else max(size, 1)
        while not self._done:
            if self._inflater is None or self._inflater.eof:
                data = self._next_stream()
                if data is None:
                    self._done = True
                    break
                out = self._begin(data, limit)
            else:
                data = self._inflater.unconsumed_tail or self._source.read(_IN_CHUNK)
                # Without input the inflater still hands out what it holds (a long match cut at the
                # limit); nothing at all means the stream ends early.
                out = self._inflater.decompress(data, limit)
                if not out and not data and not self._inflater.eof:
                    raise decode_error(
                        400, f"the {self._coding} body is truncated: it ends before its compressed data does"
                    )
            if out:
                return self._take(out, size)
        return b""

    def _begin(self, data: bytes, limit: int) -> bytes:
        if self._gzip:
            if len(data) >= len(_GZIP_MAGIC) and not data.startswith(_GZIP_MAGIC):
                raise decode_error(400, "the body is not valid gzip: it does not start with a gzip header")
            self._inflater = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
            return bytes(self._inflater.decompress(data, limit))
        wrapped = _zlib_header(data)
        self._inflater = isal_zlib.decompressobj(isal_zlib.MAX_WBITS if wrapped else -isal_zlib.MAX_WBITS)
        try:
            return bytes(self._inflater.decompress(data, limit))
        except _ISAL_ERROR:
            if not wrapped:
                raise
            # Raw DEFLATE whose first two bytes happen to read as a zlib header: read it raw.
            self._inflater = isal_zlib.decompressobj(-isal_zlib.MAX_WBITS)
            return bytes(self._inflater.decompress(data, limit))

    def _next_stream(self) -> bytes | None:
        """The input the next stream starts with; ``None`` when the body has no more."""
        if self._inflater is None:
            return self._source.read(_IN_CHUNK)
        if not self._gzip:
            return None  # deflate is one stream; what follows it is ignored, as zlib.decompress does
        rest = bytes(self._inflater.unused_data)
        while len(rest) < len(_GZIP_MAGIC) and (more := self._source.read(_IN_CHUNK)):
            rest += more
        if not rest:
            return None
        if rest.startswith(_GZIP_MAGIC):  # concatenated members are one gzip body
            return rest
        while not rest.strip(b"\0"):  # zero padding, up to the end
            rest = self._source.read(_IN_CHUNK)
            if not rest:
                return None
        raise decode_error(
            400, "the gzip body has data after its compressed data; send the gzip output alone"
        )


def _zlib_header(data: bytes) -> bool:
    """Whether ``data`` starts with a zlib header (RFC 1950: method 8, the two bytes a multiple of 31)."""
    return len(data) >= 2 and data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and (data[0] << 8 | data[1]) % 31 == 0


def decoded(body: bytes, content_encoding: str | None, limit: int, what: str = "body") -> bytes:
    """The whole decoded body (:class:`DecodedBody` read to its end)."""
    return DecodedBody(body, content_encoding, limit, what).rest()
