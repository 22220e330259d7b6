"""Which installation a command works on, before it creates one by accident.

In embedded mode every command keeps its state under ``STACKLENS_DATA_DIR`` (default ``./data``, relative to
the directory the command runs from): the secret, the control store, the warehouse. A command run from another
directory used to create a second installation there without a word, with a new secret and control store, so
`stacklens demo-org --json` printed a login and keys the running server refused. Now a command that would use
the data directory first:

* asks the configured port whether a StackLens server answers, and which data directory it serves (the
  server names it only to callers on this machine, ``GET /api/health/installation``): a server of another data
  directory means this command would work on an installation that server does not read, so it refuses and
  names the server's;
* says so, on stderr, when it is about to create a new installation, and where.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

from stacklens.errors import Conflict
from stacklens.server_link import local_url
from stacklens.settings import SECRET_FILE_NAME, Settings

# What an installation leaves in its data directory; any one of them means "this is one" (a secret from the
# environment, a control store in PostgreSQL or a ClickHouse server leave only some of them).
INSTALLATION_MARKS = (SECRET_FILE_NAME, "control.db", "warehouse")
# A local server answers its health in milliseconds; nothing listening is refused at once. A slow answer is
# not worth holding every command for.
PROBE_TIMEOUT_SECONDS = 2.0


class OtherInstallation(Conflict):
    """A server of another data directory serves on the port this command's settings name."""


@dataclass(frozen=True)
class ServingServer:
    url: str
    data_dir: Path | None  # None: it did not say (a request through a proxy, an older server)


def uses_data_dir(settings: Settings) -> bool:
    """Whether this command keeps anything under the data directory (embedded warehouse, SQLite control store,
    or a generated secret): an installation configured entirely by URLs and a secret has nothing there to
    create."""
    return settings.warehouse_url is None or settings.database_url is None or settings.secret_key is None


def is_installation(data_dir: Path) -> bool:
    return any((data_dir / mark).exists() for mark in INSTALLATION_MARKS)


def serving_server(settings: Settings) -> ServingServer | None:
    """The StackLens server answering on the configured host and port, or ``None`` when none does."""
    url = local_url(settings.host, settings.port)
    try:
        response = httpx.get(f"{url}/api/health/installation", timeout=PROBE_TIMEOUT_SECONDS)
        body = response.json()
        if response.status_code == 404:  # through a proxy, or an older server: is it StackLens at all?
            body = httpx.get(f"{url}/api/health", timeout=PROBE_TIMEOUT_SECONDS).json()
    except (httpx.HTTPError, ValueError):
        return None
    # Another program on the port is not a StackLens server; only ours answers health with this status.
    if not isinstance(body, dict) or body.get("status") not in ("ok", "degraded"):
        return None
    served = body.get("data_dir")
    return ServingServer(url, Path(served) if isinstance(served, str) and served else None)


def check_installation(settings: Settings, command: str) -> str | None:
    """Refuse (:class:`OtherInstallation`) when a server of another data directory serves on the configured
    port; return the notice to print when the command is about to create a new installation, else ``None``."""
    if not uses_data_dir(settings):
        return None
    data_dir = settings.data_dir
    existing = is_installation(data_dir)
    server = serving_server(settings)
    if server is not None:
        if server.data_dir is not None and server.data_dir != data_dir:
            raise OtherInstallation(
                f"a StackLens server on {server.url} serves the data directory {server.data_dir}, not "
                f"{data_dir}{'' if existing else ' (which does not exist yet)'}: `stacklens {command}` would "
                f"work on an installation that server does not read. Run it from {server.data_dir.parent}, or "
                f"set STACKLENS_DATA_DIR={server.data_dir}"
            )
        if server.data_dir is None and not existing:
            raise OtherInstallation(
                f"a StackLens server already serves on {server.url}, and {data_dir} holds no installation: "
                f"`stacklens {command}` would create a new one that server does not read. Set "
                "STACKLENS_DATA_DIR to the server's data directory (or run the command from the directory "
                "the server was started in)"
            )
    if existing:
        return None
    return (
        f"stacklens: creating a new installation in {data_dir} (no data directory there yet). To use an "
        "existing one, run from its directory or set STACKLENS_DATA_DIR."
    )
