"""Decompression bombs: an empty envelope header, then 1 GiB of ``\n``, in each Content-Encoding, built
without holding 1 GiB.

gzip and deflate repeat one fully flushed DEFLATE block (a full flush resets the compressor, so the same input
gives the same bytes and the copies chain into one valid stream): ~1 MB each, built in the time a checksum of
1 GiB takes (~0.3 s). zstd and brotli stream the input through their compressors in 1 MiB pieces. Each is
built once per test process. :class:`PeakGrowth` measures what decompressing one costs in memory.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import brotli
import zstandard

# The envelope header comes first, so the Sentry endpoints read past it (a body of newlines alone is refused
# at its first, empty, line); every endpoint then meets the 1 GiB that follows.
HEADER = b"{}\n"
BOMB_BYTES = len(HEADER) + 1024 * 1024 * 1024
_PIECE = b"\n" * (1024 * 1024)
_COPIES = 1024


def _deflated() -> bytes:
    """The header and the pieces as raw DEFLATE: the piece's fully flushed block repeated."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = compressor.compress(HEADER) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(_PIECE) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + block * _COPIES + compressor.flush()


def _checksum(function: Callable[[bytes, int], int], start: int) -> int:
    value = function(HEADER, start)
    for _ in range(_COPIES):
        value = function(_PIECE, value)
    return value


@cache
def bomb(coding: str) -> bytes:
    """The header and 1 GiB of newlines, compressed as ``coding`` (gzip, deflate, deflate-raw, br or zstd)."""
    if coding == "deflate-raw":
        return _deflated()
    if coding == "deflate":
        return b"\x78\xda" + _deflated() + struct.pack(">I", _checksum(zlib.adler32, 1))
    if coding == "gzip":
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        trailer = struct.pack("<II", _checksum(zlib.crc32, 0), BOMB_BYTES & 0xFFFFFFFF)
        return header + _deflated() + trailer
    if coding == "zstd":
        zstd = zstandard.ZstdCompressor(level=1).compressobj()
        pieces = [zstd.compress(HEADER)] + [zstd.compress(_PIECE) for _ in range(_COPIES)]
        return b"".join([*pieces, zstd.flush()])
    if coding == "br":
        # Quality 1 builds in ~0.7 s (~190 KB); quality 5 gives 1.6 KB in 1–4 s. The server stops at the
        # same byte either way.
        compressor = brotli.Compressor(quality=1)
        pieces = [compressor.process(HEADER)] + [compressor.process(_PIECE) for _ in range(_COPIES)]
        return b"".join([*pieces, compressor.finish()])
    raise ValueError(f"no bomb for {coding!r}")


class PeakGrowth:
    """The peak resident memory of processes over a block, above what each held when the block began (this
    process unless ``pids`` are given). Linux: writing 5 to ``/proc/<pid>/clear_refs`` resets the peak
    (VmHWM) to the current size."""

    def __init__(self, pids: Sequence[int] = ()) -> None:
        self._pids: list[int | str] = list(pids) or ["self"]
        self.each: dict[int | str, float] = {}
        self.mib = 0.0  # the largest growth
        self.held = 0.0

    def __enter__(self) -> PeakGrowth:
        self._start = {}
        for pid in self._pids:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
            self._start[pid] = _status_kib(pid, "VmRSS")
        return self

    def __exit__(self, *_: object) -> None:
        self.each = {pid: (_status_kib(pid, "VmHWM") - self._start[pid]) / 1024 for pid in self._pids}
        self.mib = max(self.each.values())
        # What is still resident at the end, above the start (the largest over the processes).
        self.held = max((_status_kib(pid, "VmRSS") - self._start[pid]) / 1024 for pid in self._pids)


def _status_kib(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)
