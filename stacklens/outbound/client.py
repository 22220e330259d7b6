"""The one HTTP client for calls to the outside (docs/architecture.md §8): timeouts, an SSRF guard, backoff
with jitter.

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
caller's own ``not_after``) covers connecting, sending, the headers and the whole body: httpx's timeouts are
per read, so a receiver dripping one byte every 5 s never tripped the 10 s read timeout and held the schedule
for minutes; here each read waits at most what is left of the deadline (:class:`DeadlineStream`). The answer
is **streamed and capped** (:data:`MAX_ANSWER_BYTES`, or less where a caller needs less): a webhook answering
1 GiB used to cost 3 GB of memory; now reading stops one chunk past the cap and the call fails with
:class:`AnswerTooLarge` — or, for a caller that only shows the answer (``cut_answer``: webhooks, Slack), the
answer is cut at the cap and the rest never read, so its status alone decides (a 2xx with a long body is a
delivery).

Retries across process restarts belong to the outbox (:mod:`stacklens.alerts.outbox`);
:func:`~stacklens.outbound.backoff.backoff_delay` is the one schedule both use, and :func:`post` can retry
in-call for callers without an outbox.

The guard is :mod:`stacklens.outbound.guard`, the pinned, deadline-bound connection
:mod:`stacklens.outbound.transport`, the schedule :mod:`stacklens.outbound.backoff`; here the client that
uses them."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import httpx

from stacklens.netaddr import Address, address_kind, describe
from stacklens.outbound.backoff import backoff_delay, parse_retry_after
from stacklens.outbound.guard import (
    AllowList,
    OutboundRefused,
    literal_ip,
    meaning_of,
    target_of,
    with_article,
)
from stacklens.outbound.transport import Deadline, DeadlinePassed, PinnedTransport, tls_context

DEFAULT_TIMEOUT_S = 10.0  # connect, and each read; a receiver slower is retried later, not waited on
# The whole call (connect, send, headers, body). Trackers answer in well under a second; 30 s leaves room for
# a slow one while a drip (one byte every few seconds) costs a tenant's worker 30 s, not minutes.
DEFAULT_DEADLINE_S = 30.0
EXCERPT_CHARS = 300
# The largest answer read: tracker API answers (a page of 100 repositories) are a few hundred KiB at most.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


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
class OutboundResponse:
    status: int
    headers: dict[str, str]
    excerpt: str
    latency_ms: float
    retry_after_s: float | None = None
    body: str = (
        ""  # the whole answer (at most the call's cap), for API clients that read it; excerpt is for logs
    )
    cut: bool = False  # the answer went on past the cap (``cut_answer``): body holds its first bytes only

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
        host, port = target_of(url)
        literal = literal_ip(host)
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
                    meaning_of(host, address, kind)
                    if literal is not None
                    else f"{host} resolves to {describe(address)}, {with_article(kind)}"
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
        cut_answer: bool = False,
    ) -> OutboundResponse:
        """POST ``content``; the guard runs first. Timeouts and connection errors raise ``httpx`` errors
        after ``retries`` in-call retries (each waiting :func:`backoff_delay`); an answer over the cap raises
        :class:`AnswerTooLarge`, or with ``cut_answer`` is cut at the cap (the rest not read)."""
        return self.request(
            "POST",
            url,
            headers,
            content,
            retries=retries,
            sleep=sleep,
            max_answer_bytes=max_answer_bytes,
            cut_answer=cut_answer,
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
        cut_answer: bool = False,
    ) -> OutboundResponse:
        """Any method (API clients GET as well as POST); the guard runs before every attempt, retries as
        :meth:`post` does. Each attempt connects only to the addresses its own check accepted, and ends
        within :attr:`deadline_s` (and by :attr:`not_after`) or raises :class:`DeadlinePassed`."""
        limit = min(max_answer_bytes or self.max_answer_bytes, self.max_answer_bytes)
        attempt = 0
        while True:
            attempt += 1
            pins = {target_of(url)[0]: self.check(url)}
            try:
                response = self._send(url, content, headers, method, pins, limit, cut_answer)
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
        cut_answer: bool = False,
    ) -> OutboundResponse:
        started = time.perf_counter()
        tls = self.tls or tls_context()
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
                raw, cut = read_capped(response, limit, cut=cut_answer)
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
            cut=cut,
        )


def read_capped(response: httpx.Response, limit: int, *, cut: bool = False) -> tuple[bytes, bool]:
    """The answer's (decoded) body, read as a stream, and whether it went on past ``limit`` bytes; a huge
    answer costs at most ``limit`` plus one chunk of memory and is never read to its end (the connection is
    closed with the rest unread). Past the limit: :class:`AnswerTooLarge`, or with ``cut`` the first
    ``limit`` bytes. Without ``cut``, a ``Content-Length`` already over the limit is refused before reading
    anything."""
    declared = response.headers.get("content-length", "")
    if (
        not cut
        and declared.isdigit()
        and int(declared) > limit
        and not response.headers.get("content-encoding")
    ):
        raise AnswerTooLarge(response.status_code, limit)
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limit:
            if not cut:
                raise AnswerTooLarge(response.status_code, limit)
            return bytes(body[:limit]), True
    return bytes(body), False


def _resolve(host: str, port: int) -> list[str]:
    """The system resolver's answer, in its order of preference (RFC 6724), each address once."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))
