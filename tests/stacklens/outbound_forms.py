"""Literal forms of a loopback address, and the reason each is refused with: the outbound guard's tests
(tests/stacklens/outbound/test_client.py at send, test_outbound_guard.py at creation)."""

from __future__ import annotations

LOOPBACK_FORMS = [
    ("2130706433", "2130706433 means 127.0.0.1, a loopback address"),
    ("0x7f000001", "0x7f000001 means 127.0.0.1, a loopback address"),
    ("127.1", "127.1 means 127.0.0.1, a loopback address"),
    ("017700000001", "017700000001 means 127.0.0.1, a loopback address"),
    ("0x7f.0.0.1", "0x7f.0.0.1 means 127.0.0.1, a loopback address"),
    ("127.0.0.1", "127.0.0.1 is a loopback address"),
    ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1 is IPv4-mapped IPv6 for 127.0.0.1, a loopback address"),
    ("[::7f00:1]", "::7f00:1 is IPv4-compatible IPv6 for 127.0.0.1, a loopback address"),
    ("[64:ff9b::7f00:1]", "64:ff9b::7f00:1 is NAT64 IPv6 for 127.0.0.1, a loopback address"),
    ("[2002:7f00:1::]", "2002:7f00:1:: is 6to4 IPv6 for 127.0.0.1, a loopback address"),
]
