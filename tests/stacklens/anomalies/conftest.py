"""The anomaly tests' warehouse fixture (a migrated database in the session's embedded ClickHouse)."""

from __future__ import annotations

from tests.pipelines.pipeline_seed import client

__all__ = ["client"]
