"""The SSRF guard of calls to the outside (docs/architecture.md §8): what a target's host means, the
operator's allow-list (``STACKLENS_OUTBOUND_ALLOW``), and :func:`validate_target` for a URL being stored.
See :mod:`stacklens.outbound.client` for how a call resolves its host once and connects only to the
addresses checked here."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

from stacklens.netaddr import Address, Network, address_kind, embedded_ipv4, literal_address

# A host name as httpx sends it: IDNA-encoded labels of letters, digits, "-" and "_", one trailing dot at
# most.
HOST_NAME = re.compile(
    r"(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?"
)
REFUSED_KINDS = "loopback, private, link-local, multicast and reserved addresses"


class OutboundRefused(ValueError):
    """The target is not allowed (scheme, host, or an address the SSRF guard refuses)."""


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


def target_of(url: str) -> tuple[str, int]:
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


def literal_ip(host: str) -> Address | None:
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
    address = literal_ip(typed)
    if address is not None:
        url = urlunsplit(parts._replace(netloc=_netloc(parts, address, port)))
    host, _port = target_of(url)
    if address is None and not HOST_NAME.fullmatch(host):
        raise OutboundRefused(f"{typed[:80]!r} is not a valid host name")
    seen = literal_ip(host)
    if seen != address:  # our parser and httpx disagree on the host: refuse rather than guess which wins
        raise OutboundRefused(f"{url[:80]!r} names its host ambiguously")
    name = host.rstrip(".")
    if seen is None and (name == "localhost" or name.endswith(".localhost")):
        seen = ipaddress.IPv4Address("127.0.0.1")
    if seen is not None:
        kind = address_kind(seen)
        if kind != "public" and not allow.allows(host, seen):
            raise OutboundRefused(
                f"{meaning_of(typed, seen, kind)}; outbound calls never go to {REFUSED_KINDS} "
                "unless STACKLENS_OUTBOUND_ALLOW allows them"
            )
    return url


def meaning_of(typed: str, address: Address, kind: str) -> str:
    """What a typed host is, in words: ``10.0.0.1 is a private address``, ``0x7f000001 means 127.0.0.1, a
    loopback address``, ``::7f00:1 is IPv4-compatible IPv6 for 127.0.0.1, a loopback address``."""
    embedded, form = embedded_ipv4(address)
    a_kind = with_article(kind)
    if embedded:
        return f"{typed} is {form} IPv6 for {' and '.join(str(a) for a in embedded)}, {a_kind}"
    if typed.rstrip(".") == str(address):
        return f"{typed} is {a_kind}"
    return f"{typed} means {address}, {a_kind}"


def with_article(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} address"


def _netloc(parts: SplitResult, address: Address, port: int | None) -> str:
    """``parts``' authority with its host written as ``address`` canonically (userinfo and port kept)."""
    userinfo = parts.netloc.rpartition("@")[0]
    zone = parts.hostname.partition("%")[2] if parts.hostname else ""
    host = f"[{address}%{zone}]" if zone else f"[{address}]" if address.version == 6 else str(address)
    return (f"{userinfo}@" if userinfo else "") + host + (f":{port}" if port is not None else "")
