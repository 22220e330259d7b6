"""Where the server listens: the port check before binding, and the address shown to people."""

from __future__ import annotations

import socket

from stacklens.errors import Unavailable
from stacklens.public_url import public_base_url, serving
from stacklens.settings import Settings


class PortInUse(Unavailable):
    """Another process holds the address the server was asked to listen on."""


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUse` when ``host:port`` cannot be bound (before any slow start-up work)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise PortInUse(f"cannot listen on {host}:{port} ({exc.strerror}); pass another --port") from exc


def base_url(settings: Settings, host: str, port: int) -> str:
    """The URL people open: ``STACKLENS_PUBLIC_URL`` when set, else the listening address."""
    return public_base_url(serving(settings, host, port))
