"""An answer's head and body leave `stacklens serve` in one write (stacklens/cli/http_protocol.py): the
transport joins what one turn of the event loop writes, holds at most one write, and loses nothing — on a
transport of its own and through the real server (keep-alive, streamed, HEAD and refused requests)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse, StreamingResponse

from stacklens.cli.http_protocol import JoinedWrites, JoinedWritesProtocol
from stacklens.cli.serve import server_for, uvicorn_config
from tests.stacklens.alerts.helpers import free_port


class Recording:
    """A transport that records what it is asked to do."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.closing = True
        self.calls.append(("close", b""))

    def abort(self) -> None:
        self.closing = True
        self.calls.append(("abort", b""))

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def _joined() -> tuple[JoinedWrites, Recording]:
    recording = Recording()
    return JoinedWrites(recording, asyncio.get_running_loop()), recording


def test_a_head_and_a_body_written_in_one_turn_are_one_write() -> None:
    async def run() -> None:
        joined, recording = _joined()
        joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert recording.calls == [] and joined.get_write_buffer_size() == 19
        joined.write(b'{"id":"1"}')
        assert recording.calls == [("write", b'HTTP/1.1 200 OK\r\n\r\n{"id":"1"}')]
        await asyncio.sleep(0)
        assert len(recording.calls) == 1  # nothing left to write at the end of the turn

    asyncio.run(run())


def test_a_lone_write_goes_out_at_the_end_of_the_turn() -> None:
    async def run() -> None:
        joined, recording = _joined()
        joined.write(b"head")
        await asyncio.sleep(0)
        assert recording.calls == [("write", b"head")]

    asyncio.run(run())


def test_a_stream_holds_at_most_one_chunk_and_keeps_every_byte_in_order() -> None:
    async def run() -> None:
        joined, recording = _joined()
        chunks = [bytes([65 + i]) * 1000 for i in range(5)]
        for chunk in chunks:
            joined.write(chunk)
            assert joined.get_write_buffer_size() <= 1000
        await asyncio.sleep(0)
        assert [len(data) for _, data in recording.calls] == [2000, 2000, 1000]
        assert b"".join(data for _, data in recording.calls) == b"".join(chunks)

    asyncio.run(run())


def test_close_writes_what_is_held_first_and_abort_drops_it() -> None:
    async def run() -> None:
        joined, recording = _joined()
        joined.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        joined.close()
        assert recording.calls == [("write", b"HTTP/1.1 400 Bad Request\r\n\r\n"), ("close", b"")]
        await asyncio.sleep(0)
        assert len(recording.calls) == 2  # the end of the turn finds nothing held (and the transport closing)

        joined, recording = _joined()
        joined.write(b"partial")
        joined.abort()
        await asyncio.sleep(0)
        assert recording.calls == [("abort", b"")]
        assert joined.get_extra_info("peername") == ("127.0.0.1", 1)  # the rest is the real transport's

    asyncio.run(run())


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = FastAPI()

    @app.post("/api/1/envelope/")
    async def envelope() -> JSONResponse:
        return JSONResponse({"id": "4a3b2c1d"})

    @app.get("/stream")
    async def stream() -> StreamingResponse:
        async def parts() -> AsyncIterator[bytes]:
            for i in range(3):
                yield f"part {i}\n".encode()
                await asyncio.sleep(0.01)

        return StreamingResponse(parts(), media_type="text/plain")

    chosen = free_port()
    config = uvicorn_config(app, "127.0.0.1", chosen)
    config.log_level = "warning"
    server = server_for(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    assert server.config.http_protocol_class is JoinedWritesProtocol
    yield chosen
    server.should_exit = True
    thread.join(10)


def _exchange(connection: socket.socket, request: bytes, until: bytes) -> bytes:
    connection.sendall(request)
    answer = b""
    while until not in answer:
        more = connection.recv(65536)
        if not more:
            break
        answer += more
    return answer


def test_answers_on_one_connection_arrive_whole_and_in_order(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        for _ in range(3):
            answer = _exchange(
                connection,
                b"POST /api/1/envelope/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
                b'{"id":"4a3b2c1d"}',
            )
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK") and b"content-length: 17" in head
            assert body == b'{"id":"4a3b2c1d"}'
        streamed = _exchange(connection, b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", b"0\r\n\r\n")
        assert b"transfer-encoding: chunked" in streamed
        assert [line for line in streamed.split(b"\r\n") if line.startswith(b"part")] == [
            b"part 0\n",
            b"part 1\n",
            b"part 2\n",
        ]
        head_only = _exchange(connection, b"HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n", b"\r\n\r\n")
        assert head_only.startswith(b"HTTP/1.1 ")


def test_a_request_uvicorn_refuses_is_answered_before_the_connection_closes(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        answer = _exchange(connection, b"NOT HTTP AT ALL\r\n\r\n", b"Invalid")
        assert answer.startswith(b"HTTP/1.1 400 Bad Request")
        assert connection.recv(100) == b""  # closed after the answer, which was written first
