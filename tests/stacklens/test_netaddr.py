"""Forwarded headers: believed from trusted proxies only, read right to left."""

from __future__ import annotations

import pytest

from stacklens.netaddr import forwarded_client, parse_networks
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
    with pytest.raises(ValueError, match="'10.0.0.300' is not an IP address or CIDR"):
        Settings(data_dir=tmp_path, trusted_proxies="10.0.0.1, 10.0.0.300")
