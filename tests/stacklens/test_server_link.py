"""The token file through which `stacklens pipelines` reaches the running server: private, per start, removed
only by the server that wrote it, and a clear error when nobody answers."""

from __future__ import annotations

import socket
import stat

import pytest

from stacklens import server_link
from stacklens.settings import Settings


def test_the_link_file_is_private_and_belongs_to_its_server(settings: Settings) -> None:
    assert server_link.read_link(settings) is None
    first = server_link.write_link(settings, "http://127.0.0.1:8000")
    path = server_link.token_path(settings)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    link = server_link.read_link(settings)
    assert link is not None and (link.url, link.token) == ("http://127.0.0.1:8000", first)
    # A newer server replaces the file; the older one's shutdown leaves the newer link in place.
    second = server_link.write_link(settings, "http://127.0.0.1:8001")
    server_link.remove_link(settings, first)
    assert server_link.read_link(settings).token == second
    server_link.remove_link(settings, second)
    assert not path.exists() and server_link.read_link(settings) is None
    path.write_text("{not json")
    assert server_link.read_link(settings) is None


def test_tokens_and_local_urls() -> None:
    assert server_link.token_matches("abc", "abc")
    assert not server_link.token_matches("abc", "abd") and not server_link.token_matches("abc", None)
    assert not server_link.token_matches(None, "abc") and not server_link.token_matches("", "")
    assert server_link.local_url("0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert server_link.local_url("::", 8000) == "http://[::1]:8000"
    assert server_link.local_url("192.0.2.5", 9) == "http://192.0.2.5:9"


def test_a_server_that_is_gone_is_unreachable() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    link = server_link.ServerLink(f"http://127.0.0.1:{port}", "t", 1)
    with pytest.raises(server_link.ServerUnreachable):
        server_link.call_server(link, "GET", "/api/pipelines/status")
