"""The port check before a slow start, and the address shown to people."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from stacklens.errors import Unavailable
from stacklens.listen import PortInUse, base_url, check_port_free
from stacklens.settings import Settings


def test_a_taken_port_is_refused_in_one_line() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(
            PortInUse, match=f"cannot listen on 127.0.0.1:{port}.*pass another --port"
        ) as caught:
            check_port_free("127.0.0.1", port)
        assert isinstance(caught.value, Unavailable)
    check_port_free("127.0.0.1", port)  # free again once released


def test_base_url(tmp_path: Path) -> None:
    plain = Settings(data_dir=tmp_path)
    assert base_url(plain, "0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert base_url(plain, "192.0.2.1", 81) == "http://192.0.2.1:81"
    public = Settings(data_dir=tmp_path, public_url="https://lens.example.test/")
    assert base_url(public, "0.0.0.0", 8000) == "https://lens.example.test"
