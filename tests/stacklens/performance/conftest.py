"""The performance tests' warehouse fixtures: the pipeline tests' migrated database in the session's embedded
ClickHouse (``client``), and the seeded worlds the reads are checked on (:mod:`read_worlds`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.warehouse.client import warehouse_client
from tests.conftest import make_settings
from tests.pipelines.pipeline_seed import client
from tests.stacklens.performance import read_worlds as w
from tests.stacklens.performance.perf_seed import Seeded

__all__ = ["client", "cut_world", "reads_world"]


# The worlds are read, never written, by their tests: each is seeded once per test module (its own warehouse
# database, dropped after the module) instead of once per test: ~1.5-2 s of seeding and fact building each,
# paid by the parametrized cases of six modules. A test still gets its own ``settings`` (data dir, control
# store) as before.


def _world(
    tmp_path_factory: pytest.TempPathFactory,
    warehouse_url: str,
    org_id: int,
    other_id: int,
    project_id: int,
    loads: tuple[int, int],
    seeds: tuple[int, int],
) -> Iterator[tuple[Client, Seeded]]:
    settings = make_settings(tmp_path_factory.mktemp("perf-world"), warehouse_url)
    world = w.two_organizations(settings, org_id, other_id, project_id, loads=loads, seeds=seeds)
    yield world
    warehouse_client(settings.resolved_warehouse_url, "default").command(
        "DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": settings.warehouse_database}
    )


@pytest.fixture(scope="module")
def _module_reads_world(tmp_path_factory, warehouse_url) -> Iterator[tuple[Client, Seeded]]:
    yield from _world(tmp_path_factory, warehouse_url, w.ORG, w.OTHER, w.PROJECT, (400, 150), (11, 12))


@pytest.fixture(scope="module")
def _module_cut_world(tmp_path_factory, warehouse_url) -> Iterator[tuple[Client, Seeded]]:
    yield from _world(
        tmp_path_factory, warehouse_url, w.CUT_ORG, w.CUT_OTHER, w.CUT_PROJECT, (500, 100), (21, 22)
    )


@pytest.fixture
def reads_world(settings, _module_reads_world):
    """400 page loads of ORG (seed 11) over two weeks and 150 of OTHER: ``(client, ORG's raw rows)``."""
    return _module_reads_world


@pytest.fixture
def cut_world(settings, _module_cut_world):
    """500 page loads of CUT_ORG (seed 21) and 100 of CUT_OTHER, for the cut windows: ``(client, raw
    rows)``."""
    return _module_cut_world
