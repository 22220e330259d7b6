"""The suite's copies of a migrated warehouse (tests/warehouse_template.py) are the database the runner
builds: the same objects with the same definitions, the same recorded migrations, the same rows, and the
runner sees nothing left to apply."""

from __future__ import annotations

from stacklens.settings import Settings
from stacklens.warehouse import migrations
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import migration_status
from tests.conftest import make_settings
from tests.warehouse_template import runner_only


def _objects(settings: Settings) -> dict[str, str]:
    client = get_warehouse(settings)
    rows = client.query(
        "SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name",
        parameters={"db": settings.warehouse_database},
    ).result_rows
    prefix = f"{settings.warehouse_database}."
    return {
        name: client.query(f"SHOW CREATE TABLE `{settings.warehouse_database}`.`{name}`")
        .result_rows[0][0]
        .replace(prefix, "<db>.")
        for (name,) in rows
    }


def _recorded(settings: Settings) -> list[tuple[str, str, int]]:
    return [(s.name, s.checksum, s.retention_days or 0) for s in migration_status(settings)]


def test_a_copy_is_the_database_the_runner_builds(settings: Settings, tmp_path) -> None:
    copied = settings
    assert migrations.apply_migrations(copied) == [m.name for m in migrations.discover()]
    migrated = make_settings(tmp_path, settings.warehouse_url)
    with runner_only():
        assert migrations.apply_migrations(migrated) == [m.name for m in migrations.discover()]

    assert _objects(copied) == _objects(migrated)
    assert len(_objects(copied)) > 40
    assert _recorded(copied) == _recorded(migrated)
    assert all(s.applied_at is not None for s in migration_status(copied))
    assert migrations.apply_migrations(copied) == []


def test_a_database_with_other_retention_is_migrated_by_the_runner(settings: Settings) -> None:
    longer = settings.model_copy(update={"retention_days": settings.retention_days + 7})
    migrations.apply_migrations(longer)
    ttl = [s.retention_days for s in migration_status(longer) if s.retention_days]
    assert ttl and set(ttl) <= {longer.retention_days, longer.log_retention_days}


def test_a_copy_of_one_layer_is_the_database_the_runner_builds(settings: Settings, tmp_path) -> None:
    """``up_to`` (the issue tests' raw layer and issue tables) has a template of its own."""
    layer = [m.name for m in migrations.discover() if m.number <= 199]
    copied = settings
    assert migrations.apply_migrations(copied, up_to=199) == layer
    migrated = make_settings(tmp_path, settings.warehouse_url)
    with runner_only():
        assert migrations.apply_migrations(migrated, up_to=199) == layer

    assert _objects(copied) == _objects(migrated)
    assert len(_objects(copied)) > 10
    assert _recorded(copied) == _recorded(migrated)
    assert migrations.apply_migrations(copied, up_to=199) == []
    # The rest of the files go on from where the copy stops, as from the runner's.
    assert migrations.apply_migrations(copied) == [m.name for m in migrations.discover() if m.number > 199]
