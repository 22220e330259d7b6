"""How `stacklens pipelines …` reaches the server that owns the embedded warehouse.

chdb opens one data directory per process, so while `stacklens serve` runs, other commands cannot open the
warehouse. The server therefore writes ``<data_dir>/pipelines_token`` (mode 0600: only the service's user
can read it) holding its local URL and a random token, and answers ``/api/pipelines/*`` for requests that
present that token. The token is per server start and removed at shutdown; organization API keys never
reach these endpoints, since the marts span every organization.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from stacklens.settings import Settings

TOKEN_FILE = "pipelines_token"
TOKEN_HEADER = "X-StackLens-Pipelines-Token"


@dataclass(frozen=True)
class ServerLink:
    url: str
    token: str
    pid: int


def token_path(settings: Settings) -> Path:
    return settings.data_dir / TOKEN_FILE


def local_url(host: str, port: int) -> str:
    """The address a local client uses to reach a server listening on ``host``."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def write_link(settings: Settings, url: str) -> str:
    """Create a fresh token file (0600, never through an existing file or link); return the token."""
    token = secrets.token_urlsafe(32)
    path = token_path(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": url, "token": token, "pid": os.getpid()}, handle)
    return token


def remove_link(settings: Settings, token: str) -> None:
    """Remove the token file if it is still this server's (a newer server may have replaced it)."""
    link = read_link(settings)
    if link is not None and hmac.compare_digest(link.token, token):
        with contextlib.suppress(FileNotFoundError):
            token_path(settings).unlink()


def read_link(settings: Settings) -> ServerLink | None:
    """The running server's link, or ``None`` when no server wrote one (or it is unreadable)."""
    try:
        data = json.loads(token_path(settings).read_text())
        return ServerLink(str(data["url"]), str(data["token"]), int(data["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def token_matches(expected: str | None, presented: str | None) -> bool:
    if not expected or not presented:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())


class ServerUnreachable(RuntimeError):
    """No server answers at the link's URL (it stopped without removing its token file)."""


def call_server(link: ServerLink, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
    """One request to the server's pipelines endpoint; raises :class:`ServerUnreachable` or
    ``RuntimeError``."""
    try:
        # A full materialization can take minutes: no read timeout, a short connect timeout.
        response = httpx.request(
            method,
            link.url + path,
            json=payload,
            headers={TOKEN_HEADER: link.token},
            timeout=httpx.Timeout(None, connect=5.0),
        )
    except httpx.TransportError as exc:
        raise ServerUnreachable(str(exc)) from exc
    if response.status_code != 200:
        try:
            body = response.json()
            reason = f"{body.get('error')}: {body.get('detail')}"
        except ValueError:
            reason = response.text[:200]
        raise RuntimeError(f"the server at {link.url} answered {response.status_code} ({reason})")
    return response.json()
