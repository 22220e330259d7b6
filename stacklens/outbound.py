"""The one HTTP client for calls to the outside (DESIGN §7.5): timeouts, an SSRF guard, backoff with jitter.

The guard resolves the target's host and checks **every** address it resolves to: loopback, private,
link-local, unique-local, multicast, reserved and unspecified addresses are refused unless the operator's
allow-list (``STACKLENS_OUTBOUND_ALLOW``: hosts or CIDRs, comma-separated) names the host or covers the
address. The refusal happens before any connection is opened. Redirects are never followed: a 3xx could
point a webhook at an internal address after the check.

Retries across process restarts belong to the outbox (:mod:`stacklens.alerts.outbox`); :func:`backoff_delay`
is the one schedule both use, and :func:`post` can retry in-call for callers without an outbox.
"""

from __future__ import annotations

import functools
import ipaddress
import random
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import certifi
import httpx

DEFAULT_TIMEOUT_S = 10.0  # connect + read; a receiver slower than this is retried later, not waited on
EXCERPT_CHARS = 300
BODY_CHARS = 4_000_000  # an API answer larger than 4 MB is cut (and then fails to parse, which is reported)
BACKOFF_BASE_S = 30.0  # first retry after ~30 s, then 1, 2, 4 … minutes
BACKOFF_CAP_S = 3600.0  # at most an hour between attempts: a 24 h retry period has ≥ 24 attempts
RETRY_AFTER_CAP_S = 6 * 3600.0  # a Retry-After beyond this is treated as this (a broken header)


class OutboundRefused(ValueError):
    """The target is not allowed (scheme, host, or an address the SSRF guard refuses)."""


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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
        return host.lower().rstrip(".") in self.hosts or any(address in n for n in self.networks)


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: dict[str, str]
    excerpt: str
    latency_ms: float
    retry_after_s: float | None = None
    body: str = ""  # the whole answer (up to BODY_CHARS), for API clients that read it; excerpt is for logs

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """5xx, 429 and 408 are worth another attempt; any other non-2xx answer is final."""
        return self.status >= 500 or self.status in (408, 429)


@dataclass
class OutboundClient:
    """Settings of outbound calls; build one per call site from the settings (nothing global)."""

    allow: AllowList = field(default_factory=AllowList)
    timeout_s: float = DEFAULT_TIMEOUT_S
    resolver: Callable[[str, int], list[str]] | None = None  # tests may pin resolution

    def check(self, url: str) -> list[Address]:
        """The addresses ``url`` resolves to, or :class:`OutboundRefused` naming the reason."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise OutboundRefused(f"url must start with http:// or https:// (got {url[:60]!r})")
        host = parts.hostname
        if not host:
            raise OutboundRefused(f"url has no host: {url[:60]!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            raw = (self.resolver or _resolve)(host, port)
        except OSError as exc:
            raise OutboundRefused(f"host {host!r} does not resolve: {exc}") from exc
        addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in raw]
        if not addresses:
            raise OutboundRefused(f"host {host!r} does not resolve")
        for address in addresses:
            if not _public(address) and not self.allow.allows(host, address):
                raise OutboundRefused(
                    f"{host} resolves to {address}, a loopback, private or link-local address; "
                    "add it to STACKLENS_OUTBOUND_ALLOW to allow it"
                )
        return addresses

    def post(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        *,
        retries: int = 0,
        sleep: Callable = time.sleep,
    ) -> OutboundResponse:
        """POST ``content``; the guard runs first. Timeouts and connection errors raise ``httpx`` errors
        after ``retries`` in-call retries (each waiting :func:`backoff_delay`)."""
        return self.request("POST", url, headers, content, retries=retries, sleep=sleep)

    def request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None = None,
        *,
        retries: int = 0,
        sleep: Callable = time.sleep,
    ) -> OutboundResponse:
        """Any method (API clients GET as well as POST); the guard runs before every attempt, retries as
        :meth:`post` does."""
        attempt = 0
        while True:
            attempt += 1
            self.check(url)
            try:
                response = self._send(url, content, headers, method)
            except httpx.TransportError:
                if attempt > retries:
                    raise
                sleep(backoff_delay(attempt))
                continue
            if response.retryable and attempt <= retries:
                sleep(backoff_delay(attempt, response.retry_after_s))
                continue
            return response

    def _send(
        self, url: str, content: bytes | None, headers: dict[str, str], method: str = "POST"
    ) -> OutboundResponse:
        started = time.perf_counter()
        with httpx.Client(
            timeout=self.timeout_s, follow_redirects=False, trust_env=False, verify=_tls_context()
        ) as client:
            response = client.request(method, url, content=content, headers=headers)
        latency = (time.perf_counter() - started) * 1000
        text = response.text
        return OutboundResponse(
            status=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            excerpt=text[:EXCERPT_CHARS],
            latency_ms=round(latency, 1),
            retry_after_s=parse_retry_after(response.headers.get("retry-after")),
            body=text[:BODY_CHARS],
        )


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA bundle (~0.1 s on a busy 2-core
    host), which per call was most of a tracker request's time."""
    return ssl.create_default_context(cafile=certifi.where())  # the bundle httpx verifies with by default


def _resolve(host: str, port: int) -> list[str]:
    return sorted({info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})  # type: ignore[misc]


def _public(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:  # ::ffff:127.0.0.1 is 127.0.0.1
        address = mapped
    return address.is_global and not address.is_multicast


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
    step = min(BACKOFF_BASE_S * 2 ** max(attempt - 1, 0), BACKOFF_CAP_S)
    delay = step * (0.5 + 0.5 * (rng or random).random())
    return max(delay, retry_after_s) if retry_after_s is not None else delay
