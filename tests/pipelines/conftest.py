"""Fixtures of the pipeline tests (defined with the seed generator in ``pipeline_seed``)."""

from __future__ import annotations

from tests.pipelines.pipeline_seed import client, defs, instance

__all__ = ["client", "defs", "instance"]
