"""Dagster's storages opened in a test process without reading its Alembic revisions again each time.

Every test that runs a pipeline opens a Dagster instance in its own data directory (a fresh SQLite home):
three storages, each created and stamped with Alembic, then checked against Alembic's head. Dagster builds
a new ``ScriptDirectory`` for each of those seven steps, and each one loads every revision file of Dagster's
storage (~150 Python files executed) to find the head: 0.3 of the 0.4 s of CPU a fresh instance took here.
The revisions are the installed package's and cannot change while the process runs, so one
``ScriptDirectory`` per script location of Dagster's serves every open of the process; its revision map is
built once. Any other location (the control store's migrations, which its tests write to) is read as before.
``tests/test_dagster_scripts.py`` opens instances with it and checks they are what Dagster makes."""

from __future__ import annotations

import importlib.util
import threading
from typing import Any, cast

from alembic.config import Config
from alembic.script import ScriptDirectory

# Dagster names its script location as a package resource ("dagster:_core/storage/alembic"); a path inside
# the installed package is the same files.
DAGSTER_LOCATIONS = ("dagster:", *(importlib.util.find_spec("dagster").submodule_search_locations or ()))

_lock = threading.Lock()
_directories: dict[str, ScriptDirectory] = {}
# Alembic's own constructor (the function under its classmethod), kept for every other location.
alembic_from_config: Any = vars(ScriptDirectory)["from_config"].__func__


def _from_config(cls: type[ScriptDirectory], config: Config) -> ScriptDirectory:
    location = config.get_main_option("script_location")
    if cls is not ScriptDirectory or not location or not location.startswith(DAGSTER_LOCATIONS):
        return cast(ScriptDirectory, alembic_from_config(cls, config))
    with _lock:
        found = _directories.get(location)
        if found is None:
            found = _directories[location] = alembic_from_config(cls, config)
        return found


def install() -> None:
    """Serve Dagster's script locations from one ``ScriptDirectory`` each in this process."""
    ScriptDirectory.from_config = classmethod(_from_config)  # type: ignore[assignment]
