"""uvicorn's HTTP protocol with an answer's head and body sent in one write.

uvicorn writes an answer's status line and headers as soon as the app starts it, and its body as a second
write. On the event loop (uvloop) each write is a system call made holding the interpreter lock, and on a
local connection the kernel delivers the segment and wakes the reader inside that call: for the SDKs'
one-event envelopes (~740 bytes of headers, a 41-byte body) the two writes were a sixth of the event loop's
time under load (bench/RESULTS.md, "peers"). Joined, the answer costs one call and one segment.

The transport given to uvicorn holds back one write until the next write or the end of the event loop's
turn, whichever comes first: a head is joined with the body the app sends in the same turn, and a streamed
answer never has more than one chunk held (the real transport's flow control still sees every byte).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class JoinedWrites:
    """A transport that writes what one turn of the event loop sends as one write (at most two joined)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is None:
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self._held = None
            self._transport.write(held + data)

    def writelines(self, chunks: Any) -> None:
        self.write(b"".join(chunks))

    def flush(self) -> None:
        """Write what is held (at the end of the turn, and before the connection closes)."""
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    def __getattr__(self, name: str) -> Any:
        # Everything else (extra info, reading's pause and resume, set_protocol) is the real transport's.
        return getattr(self._transport, name)


class JoinedWritesProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol over :class:`JoinedWrites` (``uvicorn.Config(http=...)``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(JoinedWrites(transport, self.loop))  # type: ignore[arg-type]
