"""Fixtures shared by every test folder.

The embedded ClickHouse engine (chdb) can open one data directory per process, so the whole pytest run
shares one warehouse path and each test gets its own database in it. Each test also gets its own data dir,
control store and settings. PostgreSQL and Redis tests use the machine's servers through
``STACKLENS_TEST_POSTGRES_URL`` / ``STACKLENS_TEST_REDIS_URL``; in CI (``CI=true``) a missing URL fails
the test instead of skipping it, so production-mode tests are never silently skipped there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stacklens.settings import Settings, override_settings

TEST_SECRET = "test-secret-key-0123456789abcdef"


def _require_env(name: str) -> str:
    value = os.environ.get(name)
    if value:
        return value
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{name} is not set in CI; `make test` sets it when the server answers")
    pytest.skip(f"{name} not set (run through `make test` to use the machine's server)")


@pytest.fixture(scope="session")
def warehouse_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The one chdb data directory of this test process."""
    return f"chdb://{tmp_path_factory.mktemp('chdb') / 'warehouse'}"


@pytest.fixture
def postgres_url() -> str:
    return _require_env("STACKLENS_TEST_POSTGRES_URL")


@pytest.fixture
def redis_url() -> str:
    return _require_env("STACKLENS_TEST_REDIS_URL")


def postgres_schema_url(base_url: str) -> tuple[str, str]:
    """A URL whose connections use a fresh schema, so tests on one database never see each other."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options=-csearch_path%3D{schema}", schema


def make_settings(data_dir: Path, warehouse_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": data_dir,
        "warehouse_url": warehouse_url,
        "warehouse_database": f"t_{uuid.uuid4().hex[:12]}",
        "database_url": f"sqlite:///{data_dir / 'control.db'}",
        "secret_key": TEST_SECRET,
        "run_schedules": False,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(tmp_path: Path, warehouse_url: str) -> Iterator[Settings]:
    """Fresh settings for one test (own data dir, warehouse database and SQLite control store)."""
    current = make_settings(tmp_path / "data", warehouse_url)
    current.data_dir.mkdir(parents=True, exist_ok=True)
    override_settings(current)
    try:
        yield current
    finally:
        override_settings(None)
        from stacklens.warehouse.client import reset_clients

        reset_clients()
