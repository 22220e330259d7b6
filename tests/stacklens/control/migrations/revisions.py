"""One control-store revision checked on its own: what it adds is there after its upgrade, gone after its
downgrade (the schema is then exactly the previous revision's), and the upgrade runs again after that.

Run on SQLite files, where every ``ALTER`` goes through Alembic's batch mode (a copy of the table): the path
most likely to lose a column or an index.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect

from stacklens.control.db import ALEMBIC_LOCK, MIGRATIONS_DIR

Schema = dict[str, set[str]]


def _migrate(url: str, action: str, revision: str) -> Schema:
    engine = create_engine(url)
    try:
        # Alembic's context is module-wide: a pipeline runner of an earlier test in this worker may be opening
        # its Dagster instance (Alembic too) right now; ALEMBIC_LOCK serialises us as the product does.
        with ALEMBIC_LOCK, engine.begin() as connection:
            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS_DIR))
            config.attributes["connection"] = connection
            getattr(command, action)(config, revision)
        found = inspect(engine)
        return {
            table: {c["name"] for c in found.get_columns(table)}
            | {f"index:{i['name']}" for i in found.get_indexes(table)}
            for table in found.get_table_names()
            if table != "alembic_version"
        }
    finally:
        engine.dispose()


def check_revision(tmp_path: Path, revision: str, previous: str, added: Schema) -> None:
    """``added``: table → the columns (and ``index:<name>``) the revision adds; a table it creates lists
    all."""
    before = (
        {} if previous == "base" else _migrate(f"sqlite:///{tmp_path / 'before.db'}", "upgrade", previous)
    )
    url = f"sqlite:///{tmp_path / 'control.db'}"
    after = _migrate(url, "upgrade", revision)
    for table, names in added.items():
        assert names <= after.get(table, set()), (table, names - after.get(table, set()))
        assert not names & before.get(table, set()), (table, names & before.get(table, set()))
    assert _migrate(url, "downgrade", previous) == before
    assert _migrate(url, "upgrade", revision) == after
