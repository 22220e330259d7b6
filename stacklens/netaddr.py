"""IP addresses: which peers are trusted proxies, and which targets outbound calls may reach.

``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed only when the direct peer is one of the trusted
proxies (``STACKLENS_TRUSTED_PROXIES``); anyone else could write them and pretend to be any client, or to
have arrived over HTTPS.

For outbound calls (:mod:`stacklens.outbound.client`), a URL's host is read the way browsers, curl and
``getaddrinfo`` (``inet_aton``) read it — ``2130706433``, ``0x7f000001``, ``0177.0.0.1`` and ``127.1`` all
name 127.0.0.1 — and an IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64,
6to4, Teredo) is judged by the IPv4 address its packets end up at.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(value: str) -> tuple[Network, ...]:
    """``"10.0.0.1, 192.168.0.0/16"`` → networks; ``ValueError`` naming the entry that is neither."""
    networks: list[Network] = []
    for part in (value or "").split(","):
        entry = part.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError as exc:
            raise ValueError(
                f"STACKLENS_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR (e.g. 10.0.0.0/8)"
            ) from exc
    return tuple(networks)


def is_trusted(host: str, networks: Sequence[Network]) -> bool:
    if not networks or not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in networks)


def forwarded_client(
    peer: str, forwarded_for: str | None, forwarded_proto: str | None, networks: Sequence[Network]
) -> tuple[str, str | None]:
    """The client address and scheme (``None`` when not forwarded) for a request from ``peer``.

    ``X-Forwarded-For`` is read right to left, skipping trusted proxies: the first untrusted address is
    the client (entries further left were written by the client itself and prove nothing).
    """
    if not is_trusted(peer, networks):
        return peer, None
    client = peer
    if forwarded_for:
        for hop in reversed([h.strip() for h in forwarded_for.split(",") if h.strip()]):
            client = hop
            if not is_trusted(hop, networks):
                break
    scheme = None
    if forwarded_proto:
        # A chain of proxies appends; the first value is what the client used.
        first = forwarded_proto.split(",")[0].strip().lower()
        scheme = first if first in ("http", "https") else None
    return client, scheme


# --- Outbound targets --------------------------------------------------------------------------------------

_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_DIGITS = re.compile(r"[0-9]+")


def _ipv4_number(part: str) -> int | None:
    """One part of an IPv4 literal as ``inet_aton`` and the WHATWG URL standard read it: ``0x…`` is hex,
    a leading ``0`` octal, anything else decimal; ``None`` when it is none of them."""
    if _HEX.fullmatch(part):
        return int(part[2:] or "0", 16)
    if not _DIGITS.fullmatch(part):
        return None
    if len(part) > 1 and part[0] == "0":
        return int(part, 8) if all(c in "01234567" for c in part) else None
    return int(part)


def _ends_in_number(parts: list[str]) -> bool:
    """WHATWG's test: a host whose last label is a number is an IPv4 address or no valid host at all."""
    last = parts[-1]
    return bool(_DIGITS.fullmatch(last) or _HEX.fullmatch(last))


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``host`` names in any form ``inet_aton`` and browsers accept, ``None`` for a name.

    One to four parts, each decimal, ``0x`` hex or ``0``-led octal; the last part fills the bytes left
    (``127.1`` is 127.0.0.1, ``2130706433`` too); one trailing dot is ignored. A host that ends in a number
    but is no valid address (``1.2.3.999``, ``1.2.3.4.5``) raises ``ValueError``: browsers refuse it, and a
    resolver might still answer it as a name.
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]
    if not parts or not _ends_in_number(parts):
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise ValueError(f"{host!r} ends in a number but is not a valid IPv4 address")
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        raise ValueError(f"{host!r} ends in a number but is not a valid IPv4 address (a part is too large)")
    number = last
    for position, byte in enumerate(head):
        number += byte << (8 * (3 - position))
    return ipaddress.IPv4Address(number)


def literal_address(host: str) -> Address | None:
    """The address a URL's host (brackets already removed) names literally; ``None`` for a name to resolve.

    ``ValueError`` for a host that looks like an address but is not one (see :func:`parse_ipv4`)."""
    if ":" in host:
        text = host.split("%", 1)[0]  # an IPv6 zone (fe80::1%25eth0) names an interface, not an address
        try:
            return ipaddress.IPv6Address(text)
        except ValueError as exc:
            raise ValueError(f"{host!r} is not a valid IPv6 address") from exc
    return parse_ipv4(host)


# Prefixes whose addresses carry an IPv4 address in their last 32 bits, and what to call them.
_LOW32_EMBEDDINGS: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (ipaddress.IPv6Network("::ffff:0:0/96"), "IPv4-mapped"),
    (ipaddress.IPv6Network("::ffff:0:0:0/96"), "IPv4-translated"),
    (ipaddress.IPv6Network("::/96"), "IPv4-compatible"),
    (ipaddress.IPv6Network("64:ff9b::/96"), "NAT64"),
)
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215, for an operator's own translator
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def embedded_ipv4(address: Address) -> tuple[tuple[ipaddress.IPv4Address, ...], str]:
    """The IPv4 addresses an IPv6 address leads to, and the form's name; ``((), "")`` for none.

    A local-use NAT64 address (64:ff9b:1::/48) may embed its IPv4 address in the last 32 bits (the /96
    layout DNS64 uses) or after the /48 prefix (RFC 6052 §2.2): both readings are returned, and both must be
    acceptable. Teredo gives the relay server and the client behind it (both are reached)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return (), ""
    number = int(address)
    if number <= 1:  # :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible ones
        return (), ""
    for network, name in _LOW32_EMBEDDINGS:
        if address in network:
            return (ipaddress.IPv4Address(number & 0xFFFFFFFF),), name
    if address in _LOCAL_NAT64:
        low = ipaddress.IPv4Address(number & 0xFFFFFFFF)
        # RFC 6052 /48 layout: bits 48–63 hold the first two octets, 64–71 are zero, 72–87 the last two.
        middle = ipaddress.IPv4Address(((number >> 64) & 0xFFFF) << 16 | ((number >> 40) & 0xFFFF))
        return (low, middle), "local-use NAT64"
    if address in _SIX_TO_FOUR and address.sixtofour is not None:
        return (address.sixtofour,), "6to4"
    if address in _TEREDO and address.teredo is not None:
        server, client = address.teredo
        return (server, client), "Teredo"
    return (), ""


# What each special-purpose block is (IANA's IPv4 and IPv6 special-purpose address registries): an address
# in any of them is never an outbound target unless allowed. Python's own ``is_global`` lists differ between
# patch releases (3.11.7 calls 192.0.0.8, fec0::1 and ::7f00:1 global), so the list is written out here.
_SPECIAL: tuple[tuple[Network, str], ...] = tuple(
    (ipaddress.ip_network(net), kind)
    for net, kind in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::/8", "reserved"),
        ("100::/64", "discard-only"),
        ("2001::/23", "reserved"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "reserved"),
        ("fc00::/7", "unique-local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)


def address_kind(address: Address) -> str:
    """``"public"`` for an address on the public internet, else what it is (``"loopback"``, ``"private"``,
    ``"link-local"``, ``"multicast"``, ``"reserved"`` …). An IPv6 address that carries an IPv4 address is
    what its IPv4 address is (every one, when it carries two)."""
    embedded, _form = embedded_ipv4(address)
    if embedded:
        kinds = [address_kind(v4) for v4 in embedded]
        return next((k for k in kinds if k != "public"), "public")
    for network, kind in _SPECIAL:
        if address.version == network.version and address in network:
            return kind
    if not address.is_global or address.is_multicast or address.is_reserved:
        return "reserved"
    return "public"


def is_public(address: Address) -> bool:
    return address_kind(address) == "public"


def describe(address: Address) -> str:
    """``127.0.0.1``, or ``::7f00:1 (IPv4-compatible IPv6 for 127.0.0.1)`` when it carries an IPv4 address."""
    embedded, form = embedded_ipv4(address)
    if not embedded:
        return str(address)
    return f"{address} ({form} IPv6 for {' and '.join(str(a) for a in embedded)})"
