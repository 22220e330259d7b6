"""Dagster resources: the ClickHouse warehouse and the control store, each configured with its URL.

Both build their clients through the service's own factories (``stacklens.warehouse.client`` and
``stacklens.control.db``), keyed by URL: inside ``stacklens serve`` the warehouse resource therefore gets the
very chdb client the API already holds, never a second engine on the same data directory.

Two ways to configure them, and no process-global fallback: :func:`resources_for` binds them to a
:class:`~stacklens.settings.Settings` (embedded runs, the CLI, tests); :func:`env_resources` reads the
``STACKLENS_*`` variables when Dagster initialises the resources for a run (``dagster dev`` in scaled mode).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from clickhouse_connect.driver.client import Client
from pydantic import Field
from sqlalchemy.orm import Session

from stacklens.settings import Settings


class ClickHouseResource(dg.ConfigurableResource):
    """The warehouse: ``chdb://<path>`` (embedded engine, shared with this process) or ``http(s)://…:8123``."""

    url: str = Field(description="Warehouse URL: chdb://PATH or http(s)://HOST:8123.")
    database: str = Field(description="The warehouse database of the installation.")

    def get_client(self) -> Client:
        from stacklens.warehouse.client import warehouse_client

        return warehouse_client(self.url, self.database)


class ControlStoreResource(dg.ConfigurableResource):
    """The control store (budgets live there): its SQLAlchemy URL."""

    database_url: str = Field(description="SQLAlchemy URL of the control store.")

    @contextmanager
    def session(self) -> Iterator[Session]:
        from stacklens.control.db import store_session

        with store_session(self.database_url) as session:
            yield session


def resources_for(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    """Resources bound to ``settings`` (same URLs => the same cached clients as the server's)."""
    return {
        "warehouse": ClickHouseResource(
            url=settings.resolved_warehouse_url, database=settings.warehouse_database
        ),
        "control_store": ControlStoreResource(database_url=settings.resolved_database_url),
    }


def env_resources() -> dict[str, dg.ConfigurableResource]:
    """Resources that read ``STACKLENS_WAREHOUSE_URL``, ``STACKLENS_WAREHOUSE_DATABASE`` and
    ``STACKLENS_DATABASE_URL`` when a run starts, never at import (what ``dagster dev`` loads)."""
    return {
        "warehouse": ClickHouseResource(
            url=dg.EnvVar("STACKLENS_WAREHOUSE_URL"), database=dg.EnvVar("STACKLENS_WAREHOUSE_DATABASE")
        ),
        "control_store": ControlStoreResource(database_url=dg.EnvVar("STACKLENS_DATABASE_URL")),
    }


def env_for(settings: Settings) -> dict[str, str]:
    """The variables :func:`env_resources` reads, for ``settings``: what a child Dagster process (the
    read-only UI) is started with. This process's own environment is left alone."""
    return {
        "STACKLENS_WAREHOUSE_URL": settings.resolved_warehouse_url,
        "STACKLENS_WAREHOUSE_DATABASE": settings.warehouse_database,
        "STACKLENS_DATABASE_URL": settings.resolved_database_url,
    }
