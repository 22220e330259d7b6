"""The performance tests' warehouse fixtures: the pipeline tests' migrated database in the session's embedded
ClickHouse (``client``), and the seeded worlds the reads are checked on (:mod:`read_worlds`)."""

from __future__ import annotations

import pytest

from tests.pipelines.pipeline_seed import client
from tests.stacklens.performance import read_worlds as w

__all__ = ["client", "cut_world", "reads_world"]


@pytest.fixture
def reads_world(settings):
    """400 page loads of ORG (seed 11) over two weeks and 150 of OTHER: ``(client, ORG's raw rows)``."""
    return w.two_organizations(settings, w.ORG, w.OTHER, w.PROJECT, loads=(400, 150), seeds=(11, 12))


@pytest.fixture
def cut_world(settings):
    """500 page loads of CUT_ORG (seed 21) and 100 of CUT_OTHER, for the cut windows: ``(client, raw
    rows)``."""
    return w.two_organizations(
        settings, w.CUT_ORG, w.CUT_OTHER, w.CUT_PROJECT, loads=(500, 100), seeds=(21, 22)
    )
