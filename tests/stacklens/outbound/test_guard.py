"""The SSRF guard (stacklens/outbound/guard.py): a URL being stored is refused for every form of an
internal address, public literals are written canonically, the allow-list covers what it names (and the
IPv4 address an IPv6 one carries)."""

from __future__ import annotations

import ipaddress

import pytest

from stacklens.outbound.client import OutboundClient
from stacklens.outbound.guard import AllowList, OutboundRefused, validate_target
from tests.stacklens.outbound_forms import LOOPBACK_FORMS


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        *[(f"http://{host}:8080/hook?x=1", reason) for host, reason in LOOPBACK_FORMS],
        ("http://0177.0.0.1/", "0177.0.0.1 means 127.0.0.1, a loopback address"),
        ("https://user:pw@0xa000001/", "0xa000001 means 10.0.0.1, a private address"),
        ("http://10.1/", "10.1 means 10.0.0.1, a private address"),
        ("http://0251.0376.0251.0376/", "0251.0376.0251.0376 means 169.254.169.254, a link-local address"),
        (
            "http://[::ffff:a9fe:a9fe]/",
            "::ffff:a9fe:a9fe is IPv4-mapped IPv6 for 169.254.169.254, a link-local",
        ),
        ("http://[2002:a9fe:a9fe::1]/", "2002:a9fe:a9fe::1 is 6to4 IPv6 for 169.254.169.254, a link-local"),
        ("http://[64:ff9b:1::a00:1]/", "64:ff9b:1::a00:1 is local-use NAT64 IPv6 for 10.0.0.1 and 0.0.0.0"),
        ("http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "2001:0:4136:e378:8000:63bf:f5ff:fffe is Teredo"),
        ("http://0/", "0 means 0.0.0.0, an unspecified address"),
        ("http://100.64.0.1/", "100.64.0.1 is a shared (carrier-grade NAT) address"),
        ("http://192.0.0.8/", "192.0.0.8 is a reserved address"),
        ("http://224.0.0.1/", "224.0.0.1 is a multicast address"),
        ("http://255.255.255.255/", "255.255.255.255 is a broadcast address"),
        ("http://[fec0::1]/", "fec0::1 is a site-local address"),
        ("http://[fd00::1]/", "fd00::1 is an unique-local address"),
        ("http://[fe80::1%25eth0]/", "fe80::1%25eth0 means fe80::1, a link-local address"),
        ("http://localhost:9/", "localhost means 127.0.0.1, a loopback address"),
        ("http://api.localhost./", "api.localhost. means 127.0.0.1, a loopback address"),
        ("http://1.2.3.999/", "host '1.2.3.999' ends in a number but is not a valid IPv4 address"),
        ("http://1.2.3.4.5/", "host '1.2.3.4.5' ends in a number but is not a valid IPv4 address"),
        ("http://08.1.1.1/", "host '08.1.1.1' ends in a number but is not a valid IPv4 address"),
        ("http://a b.test/", "'a b.test' is not a valid host name"),
        ("ftp://hooks.test/", "'ftp://hooks.test/' is not a valid http:// or https:// URL"),
    ],
)
def test_creation_refuses_every_form_of_an_internal_address(url: str, reason: str) -> None:
    with pytest.raises(OutboundRefused) as refused:
        validate_target(url, AllowList())
    assert str(refused.value).startswith(reason), str(refused.value)


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("http://0x08080808/p?q=1", "http://8.8.8.8/p?q=1"),
        ("https://134744072:8443/x", "https://8.8.8.8:8443/x"),
        ("http://010.8.010.8/", "http://8.8.8.8/"),
        ("https://u:p@8.8.2056/", "https://u:p@8.8.8.8/"),
        ("http://[::ffff:8.8.8.8]/", "http://[::ffff:808:808]/"),
        ("http://[64:FF9B::8.8.8.8]/", "http://[64:ff9b::808:808]/"),
        ("https://hooks.slack.com/services/T/B/x", "https://hooks.slack.com/services/T/B/x"),
        ("https://Jira.Example.COM/", "https://Jira.Example.COM/"),  # names are kept as typed
    ],
)
def test_creation_writes_public_literals_canonically(url: str, stored: str) -> None:
    assert validate_target(url, AllowList()) == stored


def test_creation_keeps_allow_list_semantics() -> None:
    assert validate_target("http://0x7f000001:9/h", AllowList.parse("127.0.0.0/8")) == "http://127.0.0.1:9/h"
    assert (
        validate_target("http://[::ffff:127.0.0.1]/", AllowList.parse("127.0.0.1"))
        == "http://[::ffff:7f00:1]/"
    )
    assert validate_target("http://localhost:9/", AllowList.parse("localhost")) == "http://localhost:9/"
    with pytest.raises(OutboundRefused, match=r"10.0.0.1, a private"):
        validate_target("http://167772161/", AllowList.parse("127.0.0.0/8, intranet.test"))


def test_allow_list_covers_the_ipv4_address_an_ipv6_one_carries() -> None:
    allow = AllowList.parse("127.0.0.0/8")
    assert allow.allows("x.test", ipaddress.ip_address("::ffff:127.0.0.1"))
    assert allow.allows("x.test", ipaddress.ip_address("64:ff9b::7f00:1"))
    assert not allow.allows("x.test", ipaddress.ip_address("::ffff:10.0.0.1"))
    client = OutboundClient(allow=allow, resolver=lambda h, p: ["::ffff:127.0.0.1"])
    assert client.check("http://mapped.test/") == [ipaddress.ip_address("::ffff:127.0.0.1")]
    with pytest.raises(OutboundRefused, match=r"::7f00:1 \(IPv4-compatible IPv6 for 127.0.0.1\), a loopback"):
        OutboundClient(resolver=lambda h, p: ["::7f00:1"]).check("http://compat.test/")
