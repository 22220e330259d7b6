"""The suite's copies of a migrated warehouse (tests/warehouse_template.py) are the database the runner
builds: the same objects with the same definitions, the same recorded migrations, the same rows, and the
runner sees nothing left to apply."""

from __future__ import annotations

from stacklens.settings import Settings
from stacklens.warehouse import migrations
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import migration_status
from tests import warehouse_template as wt
from tests.conftest import make_settings
from tests.warehouse_template import runner_only


def _names(settings: Settings, views: bool = True) -> list[str]:
    """The objects of ``settings``' database by name (``views=False``: its tables alone)."""
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT name FROM system.tables WHERE database = {db:String} AND ({views:Bool} OR engine NOT LIKE '%View') "
            "ORDER BY name",
            parameters={"db": settings.warehouse_database, "views": views},
        )
        .result_rows
    )
    return [name for (name,) in rows]


def _objects(settings: Settings) -> dict[str, str]:
    client = get_warehouse(settings)
    prefix = f"{settings.warehouse_database}."
    return {
        name: client.query(f"SHOW CREATE TABLE `{settings.warehouse_database}`.`{name}`")
        .result_rows[0][0]
        .replace(prefix, "<db>.")
        for name in _names(settings)
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


def _rows(settings: Settings) -> dict[str, int]:
    client = get_warehouse(settings)
    return {
        name: client.query(
            "SELECT count() FROM {db:Identifier}.{t:Identifier}",
            parameters={"db": settings.warehouse_database, "t": name},
        ).result_rows[0][0]
        for name in _names(settings, views=False)
    }


def _one_event(settings: Settings) -> None:
    get_warehouse(settings).command(
        "INSERT INTO {db:Identifier}.events (event_id, project_id, issue_id, timestamp, received_at) "
        "VALUES (generateUUIDv4(), 1, 7, now(), now())",
        parameters={"db": settings.warehouse_database},
    )


def test_an_emptied_database_is_the_next_copy_and_its_views_write(
    settings: Settings, tmp_path, monkeypatch
) -> None:
    """A test's database, emptied at its end into the pool, is the next fresh one: the runner's objects, the
    template's rows alone, and materialized views that fire under the new name. One that a test altered or
    added to is dropped instead."""
    from stacklens.warehouse.client import warehouse_client

    monkeypatch.setattr(wt, "POOL_SIZE", 100)  # room in the pool whatever the tests before left there
    migrations.apply_migrations(settings)
    fresh_objects, fresh_rows = _objects(settings), _rows(settings)
    client = get_warehouse(settings)
    _one_event(settings)
    client.command(
        "INSERT INTO {db:Identifier}.schema_migrations (name, checksum) VALUES ('9999_x', 'y')",
        parameters={"db": settings.warehouse_database},
    )
    assert _rows(settings) != fresh_rows
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    assert wt.recycle(admin, settings.warehouse_database)

    following = make_settings(tmp_path / "next", settings.warehouse_url)
    pooled = sum(len(names) for names in wt._pools.values())
    assert migrations.apply_migrations(following) == [m.name for m in migrations.discover()]
    assert sum(len(names) for names in wt._pools.values()) == pooled - 1, "the pooled database was taken"
    assert _objects(following) == fresh_objects
    assert _rows(following) == fresh_rows
    assert migrations.apply_migrations(following) == []
    # Its materialized views write into its own tables.
    views_before = _rows(following)
    _one_event(following)
    grown = {name for name, count in _rows(following).items() if count > views_before[name]}
    assert "events" in grown and len(grown) > 1, grown

    # Altered: dropped, not pooled.
    get_warehouse(following).command(
        "ALTER TABLE {db:Identifier}.events MODIFY COMMENT 'altered'",
        parameters={"db": following.warehouse_database},
    )
    assert not wt.recycle(admin, following.warehouse_database)


def _parts_of(settings: Settings, table: str) -> list[str]:
    return [
        name
        for (name,) in get_warehouse(settings)
        .query(
            "SELECT name FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active "
            "ORDER BY name",
            parameters={"db": settings.warehouse_database, "t": table},
        )
        .result_rows
    ]


def test_a_pooled_database_is_known_by_its_files_and_parts(settings: Settings, tmp_path, monkeypatch) -> None:
    """A database taken from the pool is checked at its end by its objects' metadata files (an ALTER writes
    the file anew), and the template's rows are written again only into a table some write reached: a
    database left alone keeps its parts, one whose ``schema_migrations`` got a row (even one replaced back
    to the same count) has the template's rows again, and a dropped view keeps it out of the pool."""
    from stacklens.warehouse.client import warehouse_client

    monkeypatch.setattr(wt, "POOL_SIZE", 100)
    admin = warehouse_client(settings.resolved_warehouse_url, "default")
    migrations.apply_migrations(settings)
    fresh_rows, fresh_recorded = _rows(settings), _recorded(settings)
    assert wt.recycle(admin, settings.warehouse_database)

    untouched = make_settings(tmp_path / "a", settings.warehouse_url)
    migrations.apply_migrations(untouched)
    built = wt._built[untouched.warehouse_database]
    assert built.files is not None and built.parts is not None, "a pooled database is known by its files"
    kept = _parts_of(untouched, "schema_migrations")
    assert wt.recycle(admin, untouched.warehouse_database)

    written = make_settings(tmp_path / "b", settings.warehouse_url)
    migrations.apply_migrations(written)
    assert _parts_of(written, "schema_migrations") == kept, "an untouched table is not written again"
    assert _rows(written) == fresh_rows
    first = migration_status(written)[0]
    get_warehouse(written).command(
        "INSERT INTO {db:Identifier}.schema_migrations (name, checksum, retention_days, updated_at) "
        "VALUES ({name:String}, 'changed', 1, now64(3) + 1)",
        parameters={"db": written.warehouse_database, "name": first.name},
    )
    get_warehouse(written).command(
        "OPTIMIZE TABLE {db:Identifier}.schema_migrations FINAL",
        parameters={"db": written.warehouse_database},
    )
    assert _rows(written) == fresh_rows and _recorded(written) != fresh_recorded, "replaced, same count"
    assert wt.recycle(admin, written.warehouse_database)

    following = make_settings(tmp_path / "c", settings.warehouse_url)
    migrations.apply_migrations(following)
    assert _rows(following) == fresh_rows
    assert _recorded(following) == fresh_recorded
    # A view dropped: not pooled.
    get_warehouse(following).command(
        "DROP VIEW {db:Identifier}.issue_list", parameters={"db": following.warehouse_database}
    )
    assert not wt.recycle(admin, following.warehouse_database)
