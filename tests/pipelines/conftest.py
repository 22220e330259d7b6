"""Fixtures of the pipeline tests (defined with the seed generator in ``pipeline_seed``)."""

from __future__ import annotations

from tests.pipelines.pipeline_seed import client, defs, instance
from tests.stacklens.issues.crashed_landing import warehouse

__all__ = ["client", "defs", "instance", "warehouse"]
