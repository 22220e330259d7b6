"""Stores made once for a test module whose tests only read what its fixtures seeded.

A test's own ``stores`` (tests/conftest.py) costs a migrated warehouse database and control store, and a
module that seeds page loads or sessions into them per test pays the seed again for every case (its
parametrized cases too). A module whose tests read and never write shares one: :func:`module_stores` makes
the stores in a data directory and warehouse database of the module's own, makes them the process's settings
while the module runs, and drops them after it. Such a module declares module-scoped ``stores`` and
``org_factory`` over these (:func:`store_fixtures`) and a ``client`` over its app, so no test of it asks for
a test's own ``settings`` (which would make other settings the process's for that test, and none after it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stacklens.control.db import migrate_control_store
from stacklens.control.keys.use_tally import flush_all
from stacklens.ingest.front_door import close_front_doors
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import reset_clients, warehouse_client
from stacklens.warehouse.migrations import apply_migrations
from tests.conftest import create_org, make_settings
from tests.warehouse_template import release

OrgFactory = Callable[..., dict[str, Any]]


@contextmanager
def module_stores(
    tmp_path_factory: pytest.TempPathFactory, warehouse_url: str, name: str
) -> Iterator[Settings]:
    """Settings with both stores migrated, the process's settings until the block ends; then dropped."""
    data = tmp_path_factory.mktemp(name) / "data"
    data.mkdir()
    settings = make_settings(data, warehouse_url)
    override_settings(settings)
    try:
        migrate_control_store(settings)
        apply_migrations(settings)
        yield settings
    finally:
        override_settings(None)
        # The module's spooled rows and key-use counts are written now, not by a thread after its stores go.
        close_front_doors()
        flush_all()
        reset_clients()
        admin = warehouse_client(settings.resolved_warehouse_url, "default")
        release(admin, settings.warehouse_database)  # emptied for the next stores of the process, or dropped


def store_fixtures(name: str) -> tuple[Any, Any]:
    """The module-scoped ``stores`` (:func:`module_stores` named ``name``) and ``org_factory``
    (:func:`org_maker`) fixtures of a reading module, as ``stores, org_factory = store_fixtures("x")``."""

    @pytest.fixture(scope="module", name="stores")
    def stores(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[Settings]:
        with module_stores(tmp_path_factory, warehouse_url, name) as settings:
            yield settings

    @pytest.fixture(scope="module", name="org_factory")
    def org_factory(stores: Settings) -> OrgFactory:
        return org_maker(stores)

    return stores, org_factory


def app_client_fixture() -> Any:
    """The module-scoped ``client`` of a reading module: a test client of the whole app (API and pages) over
    the module's ``stores``, its lifespan run once, as ``client = app_client_fixture()``."""

    @pytest.fixture(scope="module", name="client")
    def client(stores: Settings) -> Iterator[TestClient]:
        from stacklens.cli.app import build_app

        with TestClient(build_app(stores)) as test_client:
            yield test_client

    return client


def org_maker(settings: Settings) -> OrgFactory:
    """``make("Acme")`` → the dict ``org_factory`` answers (tests/conftest.py), in these stores. Organization
    names are unique in a store, and the module's tests share one: a name asked for again gets a number
    ("Acme 2")."""
    made: dict[str, int] = {}

    def make(name: str = "Acme", project: str = "Web App") -> dict[str, Any]:
        made[name] = made.get(name, 0) + 1
        return create_org(settings, name if made[name] == 1 else f"{name} {made[name]}", project)

    return make
