"""Print the environment `make test` runs pytest with (`make test` runs this file; it is no test module).

The production-mode tests (PostgreSQL control store, Redis rate limits) run when their URLs are set. We set
them whenever the machine's servers answer, so those tests are never silently skipped where the servers exist.
An already-set variable wins, so a developer can point the suite somewhere else.
"""

from __future__ import annotations

import os
import socket

DEFAULTS = {
    "STACKLENS_TEST_POSTGRES_URL": ("127.0.0.1", 5432, "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    "STACKLENS_TEST_REDIS_URL": ("127.0.0.1", 6379, "redis://127.0.0.1:6379/15"),
}


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def main() -> None:
    for name, (host, port, url) in DEFAULTS.items():
        value = os.environ.get(name)
        if value is None and _answers(host, port):
            value = url
        if value:
            print(f"{name}={value}")


if __name__ == "__main__":
    main()
