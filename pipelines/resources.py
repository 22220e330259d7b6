"""Dagster resources: the ClickHouse warehouse and the control store, configured from the environment.

Both build their clients through the service's own factories (``stacklens.warehouse.client`` and
``stacklens.control.db``), keyed by URL: inside ``stacklens serve`` the warehouse resource therefore gets the
very chdb client the API already holds, never a second engine on the same data directory.
"""

from __future__ import annotations

import dagster as dg
from clickhouse_connect.driver.client import Client
from pydantic import Field

from stacklens.settings import Settings, get_settings


def _settings(**updates: object) -> Settings:
    base = get_settings()
    values = {k: v for k, v in updates.items() if v}
    return base.model_copy(update=values) if values else base


class ClickHouseResource(dg.ConfigurableResource):
    """The warehouse: ``chdb://<path>`` (embedded engine, shared with this process) or ``http(s)://…:8123``."""

    url: str = Field(default="", description="Warehouse URL; empty = the service's configured one.")
    database: str = Field(default="", description="Database; empty = the service's configured one.")

    def settings(self) -> Settings:
        return _settings(warehouse_url=self.url, warehouse_database=self.database)

    def get_client(self) -> Client:
        from stacklens.warehouse.client import get_warehouse

        return get_warehouse(self.settings())


class ControlStoreResource(dg.ConfigurableResource):
    """The control store (budgets live there): SQLAlchemy URL, SQLite by default."""

    database_url: str = Field(default="", description="SQLAlchemy URL; empty = the service's configured one.")

    def settings(self) -> Settings:
        return _settings(database_url=self.database_url)


def default_resources() -> dict[str, dg.ConfigurableResource]:
    """Resources fed by the environment; ``stacklens`` commands export these from the service settings."""
    return {
        "warehouse": ClickHouseResource(
            url=dg.EnvVar("STACKLENS_WAREHOUSE_URL"), database=dg.EnvVar("STACKLENS_WAREHOUSE_DATABASE")
        ),
        "control_store": ControlStoreResource(database_url=dg.EnvVar("STACKLENS_DATABASE_URL")),
    }


def export_settings_env(settings: Settings) -> None:
    """Point the resources' environment variables at ``settings`` (same URL => the same cached clients)."""
    import os

    os.environ["STACKLENS_WAREHOUSE_URL"] = settings.resolved_warehouse_url
    os.environ["STACKLENS_WAREHOUSE_DATABASE"] = settings.warehouse_database
    os.environ["STACKLENS_DATABASE_URL"] = settings.resolved_database_url
