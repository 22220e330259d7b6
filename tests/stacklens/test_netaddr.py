"""Forwarded headers: believed from trusted proxies only, read right to left. Outbound targets: literal hosts
read as inet_aton reads them, IPv4 carried in IPv6, and what each special-purpose block is."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from stacklens.netaddr import (
    address_kind,
    embedded_ipv4,
    forwarded_client,
    is_public,
    literal_address,
    parse_ipv4,
    parse_networks,
)
from stacklens.settings import Settings


def test_forwarded_client_and_scheme() -> None:
    proxies = parse_networks("10.0.0.0/8, 192.168.1.1")
    assert forwarded_client("203.0.113.5", "1.2.3.4", "https", proxies) == ("203.0.113.5", None)
    assert forwarded_client("10.0.0.2", "1.2.3.4", "https", proxies) == ("1.2.3.4", "https")
    # A client that writes its own X-Forwarded-For gains nothing: the right-most untrusted hop wins.
    assert forwarded_client("10.0.0.2", "6.6.6.6, 1.2.3.4, 192.168.1.1", "https,http", proxies) == (
        "1.2.3.4",
        "https",
    )
    assert forwarded_client("10.0.0.2", None, "gopher", proxies) == ("10.0.0.2", None)
    assert forwarded_client("testclient", "1.2.3.4", "https", proxies) == ("testclient", None)


def test_bad_proxy_setting_names_the_entry(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"'10.0.0.300' is not an IP address or CIDR"):
        Settings(data_dir=tmp_path, trusted_proxies="10.0.0.1, 10.0.0.300")


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # one part: the whole 32 bits
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),  # octal
        ("127.1", "127.0.0.1"),  # the last part fills the bytes left
        ("127.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),  # mixed
        ("0177.0.0x0.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),  # one trailing dot (WHATWG; glibc would ask DNS)
        ("10.0x10000", "10.1.0.0"),
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),  # WHATWG reads an empty hex number as 0 (glibc would ask DNS)
        ("4294967295", "255.255.255.255"),
        ("example.com", None),
        ("1e100.net", None),
        ("0x7f.example", None),
        ("localhost", None),
    ],
)
def test_ipv4_literals_are_read_as_inet_aton_reads_them(host: str, address: str | None) -> None:
    expected = ipaddress.IPv4Address(address) if address else None
    assert parse_ipv4(host) == expected
    assert literal_address(host) == expected
    if expected is not None and host not in ("127.0.0.1.", "0x"):  # glibc's getaddrinfo (inet_aton) agrees
        infos = socket.getaddrinfo(host, 80, socket.AF_INET, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
        assert {info[4][0] for info in infos} == {str(expected)}


@pytest.mark.parametrize(
    "host", ["4294967296", "1.2.3.256", "256.1", "1.2.3.4.5", "08", "1..2", "0x1.0xgg.1", "1.2.65536"]
)
def test_hosts_that_end_in_a_number_but_are_no_address_are_refused(host: str) -> None:
    with pytest.raises(ValueError, match="ends in a number but is not a valid IPv4 address"):
        parse_ipv4(host)


@pytest.mark.parametrize(
    ("address", "embedded", "form"),
    [
        ("::ffff:127.0.0.1", ["127.0.0.1"], "IPv4-mapped"),
        ("::ffff:0:a00:1", ["10.0.0.1"], "IPv4-translated"),
        ("::7f00:1", ["127.0.0.1"], "IPv4-compatible"),
        ("::1", [], ""),  # the loopback address, not an IPv4-compatible one
        ("::2", ["0.0.0.2"], "IPv4-compatible"),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"], "NAT64"),
        ("64:ff9b:1::a00:1", ["10.0.0.1", "0.0.0.0"], "local-use NAT64"),
        ("64:ff9b:1:a00:1:100::", ["0.0.0.0", "10.0.1.1"], "local-use NAT64"),  # RFC 6052 /48 layout
        ("2002:c0a8:101::1", ["192.168.1.1"], "6to4"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", ["65.54.227.120", "192.0.2.45"], "Teredo"),
        ("2606:4700::1111", [], ""),
        ("8.8.8.8", [], ""),
    ],
)
def test_embedded_ipv4(address: str, embedded: list[str], form: str) -> None:
    found, name = embedded_ipv4(ipaddress.ip_address(address))
    assert [str(a) for a in found] == embedded and name == form


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("8.8.8.8", "public"),
        ("2606:4700::1111", "public"),
        ("64:ff9b::808:808", "public"),  # NAT64 to a public address
        ("2002:808:808::1", "public"),  # 6to4 of a public address
        ("127.0.0.2", "loopback"),
        ("::1", "loopback"),
        ("::2", "unspecified"),  # IPv4-compatible for 0.0.0.2, in 0.0.0.0/8
        ("10.9.8.7", "private"),
        ("172.31.255.255", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("100.100.100.200", "shared (carrier-grade NAT)"),
        ("192.0.0.8", "reserved"),  # Python 3.11.7's is_global calls this one global
        ("192.0.2.1", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("224.0.0.251", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("::7f00:1", "loopback"),  # IPv4-compatible
        ("::ffff:a9fe:a9fe", "link-local"),
        ("64:ff9b::a00:1", "private"),
        ("64:ff9b:1::808:808", "unspecified"),  # the /48 reading gives 0.0.0.0: both readings must pass
        ("2002:a00:1::", "private"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "documentation"),  # Teredo client 192.0.2.45
        ("100::1", "discard-only"),
        ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("fd12:3456::1", "unique-local"),
        ("fe80::1", "link-local"),
        ("fec0::1", "site-local"),  # Python 3.11.7's is_global calls this one global
        ("ff02::1", "multicast"),
        ("4000::1", "reserved"),  # outside 2000::/3, unassigned
    ],
)
def test_address_kind(address: str, kind: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind
    assert is_public(ipaddress.ip_address(address)) == (kind == "public")
