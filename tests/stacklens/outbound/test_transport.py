"""How a call connects (stacklens/outbound/transport.py): the pinned backend connects to the hosts the
guard checked, only."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import httpcore
import pytest

from stacklens.outbound.transport import PinnedBackend
from tests.stacklens.alerts.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_the_pinned_backend_connects_to_checked_hosts_only(receiver: Receiver) -> None:
    port = int(receiver.url.split(":")[2].split("/")[0])
    backend = PinnedBackend({"hooks.test": [ipaddress.ip_address("127.0.0.1")]})
    backend.connect_tcp("hooks.test", port, timeout=2).close()
    with pytest.raises(httpcore.ConnectError, match="not checked by the outbound guard"):
        backend.connect_tcp("127.0.0.1", port, timeout=2)
    with pytest.raises(httpcore.ConnectError, match="unix sockets"):
        backend.connect_unix_socket("/tmp/x.sock")
