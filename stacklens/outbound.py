"""The one HTTP client for calls to the outside (DESIGN §7.5): timeouts, an SSRF guard, backoff with jitter.

The guard resolves the target's host **once** and checks **every** address it resolves to: loopback, private,
link-local, unique-local, multicast, reserved and unspecified addresses are refused unless the operator's
allow-list (``STACKLENS_OUTBOUND_ALLOW``: hosts or CIDRs, comma-separated) names the host or covers the
address. A literal host is read as browsers and ``inet_aton`` read it (``http://2130706433/`` is
127.0.0.1), and an IPv6 address that carries an IPv4 address (``::ffff:a.b.c.d``, ``::a.b.c.d``, NAT64,
6to4, Teredo) is judged by that IPv4 address (:mod:`stacklens.netaddr`). The refusal happens before any
connection is opened.

The connection then goes to the addresses that were checked, never to a second DNS answer: a name whose
answer changes between the check and the connection (DNS rebinding) cannot reach an internal address. The
request keeps the name in its ``Host`` header, and TLS sends it as SNI and verifies the certificate for it.
Redirects are never followed: a 3xx could point a webhook at an internal address after the check.

:func:`validate_target` is the same guard for a URL being stored (channels, tracker connections): it refuses
literal internal addresses at once, naming what the host means, and writes literal hosts canonically.

Every call is bounded twice over. A **total deadline** (:data:`DEFAULT_DEADLINE_S`, cut shorter by the
caller's own ``not_after``) covers connecting, sending, the headers and the whole body: httpx's timeouts are per
read, so a receiver dripping one byte every 5 s never tripped the 10 s read timeout and held the schedule for
minutes; here each read waits at most what is left of the deadline (:class:`DeadlineStream`). The answer is
**streamed and capped** (:data:`MAX_ANSWER_BYTES`, or less where a caller needs less): a webhook answering
1 GiB used to cost 3 GB of memory; now reading stops one chunk past the cap and the call fails with
:class:`AnswerTooLarge`.

Retries across process restarts belong to the outbox (:mod:`stacklens.alerts.outbox`); :func:`backoff_delay`
is the one schedule both use, and :func:`post` can retry in-call for callers without an outbox.
"""

from __future__ import annotations

import functools
import ipaddress
import random
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import certifi
import httpcore
import httpx

from stacklens.netaddr import Address, Network, address_kind, describe, embedded_ipv4, literal_address

DEFAULT_TIMEOUT_S = 10.0  # connect, and each read; a receiver slower is retried later, not waited on
# The whole call (connect, send, headers, body). Trackers answer in well under a second; 30 s leaves room for a
# slow one while a drip (one byte every few seconds) costs a tenant's worker 30 s, not minutes.
DEFAULT_DEADLINE_S = 30.0
EXCERPT_CHARS = 300
# The largest answer read: tracker API answers (a page of 100 repositories) are a few hundred KiB at most.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
BACKOFF_BASE_S = 30.0  # first retry after ~30 s, then 1, 2, 4 … minutes
BACKOFF_CAP_S = 3600.0  # at most an hour between attempts: a 24 h retry period has ≥ 24 attempts
RETRY_AFTER_CAP_S = 6 * 3600.0  # a Retry-After beyond this is treated as this (a broken header)


# A host name as httpx sends it: IDNA-encoded labels of letters, digits, "-" and "_", one trailing dot at most.
HOST_NAME = re.compile(
    r"(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?"
)
REFUSED_KINDS = "loopback, private, link-local, multicast and reserved addresses"


class OutboundRefused(ValueError):
    """The target is not allowed (scheme, host, or an address the SSRF guard refuses)."""


class DeadlinePassed(httpx.TimeoutException):
    """The call did not complete (connect, send, the whole answer) within its total deadline."""


class AnswerTooLarge(Exception):
    """The answer is larger than the caller reads; reading stopped at the cap (the rest was never read)."""

    def __init__(self, status: int, limit: int) -> None:
        self.status = status
        self.limit = limit
        super().__init__(
            f"the answer ({status}) is larger than {size_text(limit)}; StackLens reads at most that much, "
            "so the rest was not read"
        )


def size_text(n: int) -> str:
    """``64 KiB``, ``4 MiB``: binary units, named as such."""
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 and n % (1024 * 1024) == 0 else f"{n // 1024} KiB"


@dataclass(frozen=True)
class AllowList:
    """What ``STACKLENS_OUTBOUND_ALLOW`` allows beside the public internet."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, value: str | None) -> AllowList:
        hosts, networks = set(), []
        for raw in (value or "").split(","):
            item = raw.strip().lower()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def allows(self, host: str, address: Address) -> bool:
        """The host is listed, or a listed network covers the address or the IPv4 address it carries."""
        if host.lower().rstrip(".") in self.hosts:
            return True
        embedded, _form = embedded_ipv4(address)
        return any(a in n for a in (address, *embedded) for n in self.networks if a.version == n.version)


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: dict[str, str]
    excerpt: str
    latency_ms: float
    retry_after_s: float | None = None
    body: str = (
        ""  # the whole answer (at most the call's cap), for API clients that read it; excerpt is for logs
    )

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """5xx, 429 and 408 are worth another attempt; any other non-2xx answer is final."""
        return self.status >= 500 or self.status in (408, 429)


Resolver = Callable[[str, int], list[str]]


@dataclass
class OutboundClient:
    """Settings of outbound calls; build one per call site from the settings (nothing global).

    ``resolver`` answers a name's addresses (``getaddrinfo`` by default; tests give one that asks their own
    DNS server) and ``tls`` verifies servers (the certifi bundle by default). ``deadline_s`` bounds each
    attempt as a whole and ``not_after`` (a :func:`time.monotonic` instant, see :meth:`until`) bounds every
    call of this client: a per-tenant worker gives its client the tenant's budget."""

    allow: AllowList = field(default_factory=AllowList)
    timeout_s: float = DEFAULT_TIMEOUT_S
    resolver: Resolver | None = None
    tls: ssl.SSLContext | None = None
    deadline_s: float = DEFAULT_DEADLINE_S
    max_answer_bytes: int = MAX_ANSWER_BYTES
    not_after: float | None = None

    def until(self, not_after: float) -> OutboundClient:
        """This client, with every call ending by the monotonic instant ``not_after`` (or sooner)."""
        earlier = not_after if self.not_after is None else min(self.not_after, not_after)
        return replace(self, not_after=earlier)

    def check(self, url: str) -> list[Address]:
        """The addresses ``url`` resolves to, or :class:`OutboundRefused` naming the reason."""
        host, port = _target(url)
        literal = _literal(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                raw = (self.resolver or _resolve)(host, port)
            except OSError as exc:
                raise OutboundRefused(f"host {host!r} does not resolve: {exc}") from exc
            addresses = list(dict.fromkeys(ipaddress.ip_address(a.split("%", 1)[0]) for a in raw))
        if not addresses:
            raise OutboundRefused(f"host {host!r} does not resolve")
        for address in addresses:
            kind = address_kind(address)
            if kind != "public" and not self.allow.allows(host, address):
                what = (
                    _meaning(host, address, kind)
                    if literal is not None
                    else f"{host} resolves to {describe(address)}, {_a(kind)}"
                )
                raise OutboundRefused(f"{what}; add it to STACKLENS_OUTBOUND_ALLOW to allow it")
        return addresses

    def post(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        *,
        retries: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        max_answer_bytes: int | None = None,
    ) -> OutboundResponse:
        """POST ``content``; the guard runs first. Timeouts and connection errors raise ``httpx`` errors
        after ``retries`` in-call retries (each waiting :func:`backoff_delay`); an answer over the cap raises
        :class:`AnswerTooLarge`."""
        return self.request(
            "POST", url, headers, content, retries=retries, sleep=sleep, max_answer_bytes=max_answer_bytes
        )

    def request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None = None,
        *,
        retries: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        max_answer_bytes: int | None = None,
    ) -> OutboundResponse:
        """Any method (API clients GET as well as POST); the guard runs before every attempt, retries as
        :meth:`post` does. Each attempt connects only to the addresses its own check accepted, and ends
        within :attr:`deadline_s` (and by :attr:`not_after`) or raises :class:`DeadlinePassed`."""
        limit = min(max_answer_bytes or self.max_answer_bytes, self.max_answer_bytes)
        attempt = 0
        while True:
            attempt += 1
            pins = {_target(url)[0]: self.check(url)}
            try:
                response = self._send(url, content, headers, method, pins, limit)
            except httpx.TransportError:
                if attempt > retries or self._out_of_time():
                    raise
                sleep(backoff_delay(attempt))
                continue
            if response.retryable and attempt <= retries and not self._out_of_time():
                sleep(backoff_delay(attempt, response.retry_after_s))
                continue
            return response

    def _out_of_time(self) -> bool:
        return self.not_after is not None and time.monotonic() >= self.not_after

    def _deadline(self) -> float:
        """The monotonic instant this attempt must end by."""
        end = time.monotonic() + self.deadline_s
        return end if self.not_after is None else min(end, self.not_after)

    def _send(
        self,
        url: str,
        content: bytes | None,
        headers: dict[str, str],
        method: str,
        pins: Mapping[str, Sequence[Address]],
        limit: int,
    ) -> OutboundResponse:
        started = time.perf_counter()
        tls = self.tls or _tls_context()
        deadline = Deadline(self._deadline(), self.deadline_s)
        try:
            with (
                httpx.Client(
                    transport=PinnedTransport(pins, tls, deadline),
                    timeout=self.timeout_s,
                    follow_redirects=False,
                    trust_env=False,
                ) as client,
                client.stream(method, url, content=content, headers=headers) as response,
            ):
                raw = read_capped(response, limit)
        except httpx.TimeoutException as exc:
            if deadline.passed():
                budget = time.perf_counter() - started
                raise DeadlinePassed(
                    f"no complete answer within {budget:.0f} s (the call's deadline)"
                ) from exc
            raise
        latency = (time.perf_counter() - started) * 1000
        text = raw.decode(response.charset_encoding or "utf-8", errors="replace")
        return OutboundResponse(
            status=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            excerpt=text[:EXCERPT_CHARS],
            latency_ms=round(latency, 1),
            retry_after_s=parse_retry_after(response.headers.get("retry-after")),
            body=text,
        )


def read_capped(response: httpx.Response, limit: int) -> bytes:
    """The answer's (decoded) body, read as a stream; :class:`AnswerTooLarge` as soon as it passes ``limit``
    bytes, so a huge answer costs at most ``limit`` plus one chunk of memory and is never read to its end.
    A ``Content-Length`` already over the limit is refused before reading anything."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit and not response.headers.get("content-encoding"):
        raise AnswerTooLarge(response.status_code, limit)
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limit:
            raise AnswerTooLarge(response.status_code, limit)
    return bytes(body)


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


def _target(url: str) -> tuple[str, int]:
    """The host (as httpx sends it) and port of an http(s) URL, or :class:`OutboundRefused`."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise OutboundRefused(f"url {url[:60]!r} is not valid: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise OutboundRefused(f"url must start with http:// or https:// (got {url[:60]!r})")
    host = parsed.raw_host.decode("ascii")
    if not host:
        raise OutboundRefused(f"url has no host: {url[:60]!r}")
    return host, parsed.port or (443 if parsed.scheme == "https" else 80)


def _literal(host: str) -> Address | None:
    try:
        return literal_address(host)
    except ValueError as exc:
        raise OutboundRefused(f"host {exc}") from exc


def validate_target(url: str, allow: AllowList) -> str:
    """``url`` as it should be stored for later outbound calls, or :class:`OutboundRefused` saying why not
    (the caller adds the field's name).

    A literal host in any form (``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``, ``[::7f00:1]``)
    is read as browsers and ``inet_aton`` read it; one that is not public is refused unless the allow-list
    covers it, and one that is kept is written canonically (``http://0x08080808/`` is stored as
    ``http://8.8.8.8/``), so the stored URL says where calls go. ``localhost`` and ``*.localhost`` are
    loopback (RFC 6761). Other names are accepted here and checked, resolved and pinned at every call: their
    DNS answer can change after this.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise OutboundRefused(f"{url[:80]!r} is not a valid http:// or https:// URL")
    try:
        port = parts.port
    except ValueError as exc:
        raise OutboundRefused(f"{url[:80]!r} has an invalid port") from exc
    typed = parts.hostname
    address = _literal(typed)
    if address is not None:
        url = urlunsplit(parts._replace(netloc=_netloc(parts, address, port)))
    host, _port = _target(url)
    if address is None and not HOST_NAME.fullmatch(host):
        raise OutboundRefused(f"{typed[:80]!r} is not a valid host name")
    seen = _literal(host)
    if seen != address:  # our parser and httpx disagree on the host: refuse rather than guess which wins
        raise OutboundRefused(f"{url[:80]!r} names its host ambiguously")
    name = host.rstrip(".")
    if seen is None and (name == "localhost" or name.endswith(".localhost")):
        seen = ipaddress.IPv4Address("127.0.0.1")
    if seen is not None:
        kind = address_kind(seen)
        if kind != "public" and not allow.allows(host, seen):
            raise OutboundRefused(
                f"{_meaning(typed, seen, kind)}; outbound calls never go to {REFUSED_KINDS} "
                "unless STACKLENS_OUTBOUND_ALLOW allows them"
            )
    return url


def _meaning(typed: str, address: Address, kind: str) -> str:
    """What a typed host is, in words: ``10.0.0.1 is a private address``, ``0x7f000001 means 127.0.0.1, a
    loopback address``, ``::7f00:1 is IPv4-compatible IPv6 for 127.0.0.1, a loopback address``."""
    embedded, form = embedded_ipv4(address)
    a_kind = _a(kind)
    if embedded:
        return f"{typed} is {form} IPv6 for {' and '.join(str(a) for a in embedded)}, {a_kind}"
    if typed.rstrip(".") == str(address):
        return f"{typed} is {a_kind}"
    return f"{typed} means {address}, {a_kind}"


def _a(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} address"


def _netloc(parts: SplitResult, address: Address, port: int | None) -> str:
    """``parts``' authority with its host written as ``address`` canonically (userinfo and port kept)."""
    userinfo = parts.netloc.rpartition("@")[0]
    zone = parts.hostname.partition("%")[2] if parts.hostname else ""
    host = f"[{address}%{zone}]" if zone else f"[{address}]" if address.version == 6 else str(address)
    return (f"{userinfo}@" if userinfo else "") + host + (f":{port}" if port is not None else "")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA bundle (~0.1 s on a busy 2-core
    host), which per call was most of a tracker request's time."""
    return ssl.create_default_context(cafile=certifi.where())  # the bundle httpx verifies with by default


def _resolve(host: str, port: int) -> list[str]:
    """The system resolver's answer, in its order of preference (RFC 6724), each address once."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date); ``None`` if absent."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - (now if now is not None else time.time())
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def backoff_delay(
    attempt: int, retry_after_s: float | None = None, rng: random.Random | None = None
) -> float:
    """Seconds before attempt ``attempt + 1``: exponential from 30 s, capped at an hour, with jitter.

    Jitter draws from [50 %, 100 %] of the exponential step ("equal jitter"), so receivers recovering from an
    outage are not hit by every sender at once, yet a retry never comes sooner than half the step. A
    ``Retry-After`` answer is honoured: the delay is never shorter than what the receiver asked for.
    """
    step = min(BACKOFF_BASE_S * 2.0 ** max(attempt - 1, 0), BACKOFF_CAP_S)
    delay = step * (0.5 + 0.5 * (rng.random() if rng is not None else random.random()))
    return max(delay, retry_after_s) if retry_after_s is not None else delay
