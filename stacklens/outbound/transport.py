"""How a call to the outside connects (:mod:`stacklens.outbound.client`): only to the addresses the guard
checked (:class:`PinnedBackend`, no second DNS answer), TLS verified for the host's name, and every read
bounded by what is left of the call's total deadline (:class:`DeadlineStream`)."""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import certifi
import httpcore
import httpx

from stacklens.netaddr import Address


class DeadlinePassed(httpx.TimeoutException):
    """The call did not complete (connect, send, the whole answer) within its total deadline."""


@dataclass(frozen=True)
class Deadline:
    """The instant (``time.monotonic``) a call must end by, and the budget it was given (for the message)."""

    at: float
    budget_s: float

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def left(self, timeout: float | None) -> float:
        """What a socket operation may wait: its own timeout, cut to what is left of the deadline."""
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout(
                f"no complete answer within the call's deadline ({self.budget_s:g} s or the caller's budget)"
            )
        return remaining if timeout is None else min(timeout, remaining)


class DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most what is left of the call's deadline: the
    per-read timeout alone lets a sender that drips a byte at a time hold the call for ever."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        secured = self._stream.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return DeadlineStream(secured, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to the addresses the guard checked for each host name.

    httpcore asks for ``connect_tcp(host=<the URL's host>)`` and later starts TLS with that same name as SNI
    (and verifies the certificate for it), so connecting to the checked address here changes where the
    bytes go and nothing else. A host that was not checked is never connected to."""

    def __init__(self, pins: Mapping[str, Sequence[Address]], deadline: Deadline | None = None) -> None:
        self._pins = {host: tuple(addresses) for host, addresses in pins.items()}
        self._sockets = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self._pins.get(host)
        if not addresses:
            raise httpcore.ConnectError(f"{host} was not checked by the outbound guard; not connecting to it")
        failure: Exception | None = None
        for address in addresses:  # in the resolver's order, like socket.create_connection
            try:
                wait = self._deadline.left(timeout) if self._deadline else timeout
                stream = self._sockets.connect_tcp(str(address), port, wait, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return DeadlineStream(stream, self._deadline) if self._deadline else stream
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("outbound calls never use unix sockets")

    def sleep(self, seconds: float) -> None:
        self._sockets.sleep(seconds)


class PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport (request mapping, error mapping, TLS) over a pool that connects through
    :class:`PinnedBackend`. httpx takes no network backend, so its pool is replaced; the type check makes
    a future httpx that stores its pool elsewhere fail loudly instead of connecting unpinned."""

    def __init__(
        self, pins: Mapping[str, Sequence[Address]], tls: ssl.SSLContext, deadline: Deadline | None = None
    ) -> None:
        super().__init__(verify=tls, trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.ConnectionPool):
            raise RuntimeError(
                "httpx.HTTPTransport no longer keeps its pool in _pool: pinning cannot be set up"
            )
        self._pool = httpcore.ConnectionPool(ssl_context=tls, network_backend=PinnedBackend(pins, deadline))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA bundle (~0.1 s on a busy 2-core
    host), which per call was most of a tracker request's time."""
    return ssl.create_default_context(cafile=certifi.where())  # the bundle httpx verifies with by default
