"""The control store's Alembic environment: the caller's connection, or the settings' URL when Alembic is run
by hand; never an offline SQL script."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect

from stacklens.control.db import ALEMBIC_LOCK, MIGRATIONS_DIR, dispose_engines


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def test_run_by_hand_it_migrates_the_store_the_environment_names(tmp_path: Path, monkeypatch) -> None:
    url = f"sqlite:///{tmp_path / 'control.db'}"
    monkeypatch.setenv("STACKLENS_DATABASE_URL", url)
    try:
        with ALEMBIC_LOCK:  # Alembic's context is module-wide (stacklens/control/db.py)
            command.upgrade(_config(), "head")
    finally:
        dispose_engines()
    engine = create_engine(url)
    try:
        assert {"organizations", "projects", "saved_queries", "alembic_version"} <= set(
            inspect(engine).get_table_names()
        )
    finally:
        engine.dispose()


def test_an_offline_script_is_refused() -> None:
    with pytest.raises(SystemExit, match="run `stacklens migrate`"), ALEMBIC_LOCK:
        command.upgrade(_config(), "head", sql=True)
