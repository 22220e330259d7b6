"""A serving installation's secret-bearing files are the service's alone: through a real server on a fresh
data directory (SQLite control store, generated secret), control.db, its WAL and shm files and secret_key
are 0600 under the usual umask 022."""

from __future__ import annotations

import os
import stat

import httpx

from stacklens.control.db import dispose_engines, migrate_control_store
from stacklens.settings import SECRET_FILE_NAME, Settings, override_settings
from tests.api.live import serve


def test_control_store_and_secret_are_0600_while_serving(settings: Settings) -> None:
    old_umask = os.umask(0o022)
    try:
        generated = settings.model_copy(update={"secret_key": None})
        override_settings(generated)
        dispose_engines()
        migrate_control_store(generated)
        with serve(generated) as base:
            # The sign-in page signs its CSRF token with the secret: it is generated now if it was not.
            assert httpx.get(f"{base}/login", timeout=30).status_code == 200
            database = generated.data_dir / "control.db"
            files = [
                database,
                database.with_name("control.db-wal"),
                database.with_name("control.db-shm"),
                generated.data_dir / SECRET_FILE_NAME,
            ]
            modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()}
            assert set(modes) == {f.name for f in files}, modes
            assert modes == {name: 0o600 for name in modes}, {k: oct(v) for k, v in modes.items()}
    finally:
        os.umask(old_umask)
