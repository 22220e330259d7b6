"""Client addresses behind reverse proxies: which peers are trusted, and what they say the client is.

``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed only when the direct peer is one of the trusted
proxies (``STACKLENS_TRUSTED_PROXIES``); anyone else could write them and pretend to be any client, or to
have arrived over HTTPS.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

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
