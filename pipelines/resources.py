"""Dagster resources: the ClickHouse warehouse and the control store, each configured with its URL.

Both build their clients through the service's own factories (``stacklens.warehouse.client`` and
``stacklens.control.db``), keyed by URL: inside ``stacklens serve`` the warehouse resource therefore gets the
very chdb client the API already holds, never a second engine on the same data directory.

Two ways to configure them, and no process-global fallback: :func:`resources_for` binds them to a
:class:`~stacklens.settings.Settings` (embedded runs, the CLI, tests); :func:`env_resources` reads the
``STACKLENS_*`` variables when Dagster initialises the resources for a run (``dagster dev`` in scaled mode).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from clickhouse_connect.driver.client import Client
from pydantic import Field
from sqlalchemy.orm import Session

from stacklens.errors import Unavailable
from stacklens.settings import Settings

# What `dagster dev -w workspace.yaml` needs, in words: said by every schedule tick that has to skip, and by a
# run that cannot start, instead of an environment-variable error every minute.
SCALED_SETTINGS_MISSING = (
    "{names} not set: `dagster dev -w workspace.yaml` (and dagster-daemon / dagster-webserver) run the pipelines "
    "of a scaled installation and need STACKLENS_WAREHOUSE_URL (http(s)://…:8123), STACKLENS_WAREHOUSE_DATABASE "
    "and STACKLENS_DATABASE_URL. An embedded installation runs its pipelines inside `stacklens serve` (the "
    "embedded warehouse belongs to that one process); see them with `stacklens pipelines status` or the "
    "read-only UI `stacklens pipelines ui`."
)


# How long a Dagster process waits for the embedded warehouse while another one holds it (a mart run).
EMBEDDED_TURN_SECONDS = 300.0


class PipelinesNotConfigured(Unavailable):
    """The variables a Dagster process needs are not set (see :data:`SCALED_SETTINGS_MISSING`)."""


def _from_environment(names: tuple[str, ...]) -> tuple[str, ...]:
    values = tuple(os.environ.get(name, "") for name in names)
    missing = [name for name, value in zip(names, values, strict=True) if not value]
    if missing:
        raise PipelinesNotConfigured(SCALED_SETTINGS_MISSING.format(names=", ".join(missing)))
    return values


# The resources subclass the bare `ConfigurableResource`: `ConfigurableResource[Any]` would be a new pydantic
# class made at run time (a generic model's subscript), not an annotation: mypy's type-arg is waived here.
class ClickHouseResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The warehouse: ``chdb://<path>`` (embedded engine, shared with this process) or ``http(s)://…:8123``.

    Bound to settings (``url``/``database``), or, for the Dagster processes, read from ``STACKLENS_*`` when a
    schedule ticks or a run starts (``from_env``), never at import.
    """

    url: str = Field(default="", description="Warehouse URL: chdb://PATH or http(s)://HOST:8123.")
    database: str = Field(default="", description="The warehouse database of the installation.")
    from_env: bool = Field(default=False, description="Read STACKLENS_WAREHOUSE_URL / _DATABASE when used.")
    cluster: str = Field(
        default="", description="STACKLENS_WAREHOUSE_CLUSTER of the installation; empty: none."
    )

    def location(self) -> tuple[str, str]:
        if self.from_env:
            url, database = _from_environment(("STACKLENS_WAREHOUSE_URL", "STACKLENS_WAREHOUSE_DATABASE"))
            return url, database
        return self.url, self.database

    def in_place(self, statement: str) -> str:
        """``statement`` (a ``DELETE FROM``/``TRUNCATE``/``OPTIMIZE``) as this deployment runs it: on a
        cluster, against every node's data table (:func:`stacklens.warehouse.cluster.in_place`)."""
        from stacklens.warehouse.cluster import in_place

        cluster = os.environ.get("STACKLENS_WAREHOUSE_CLUSTER", "") if self.from_env else self.cluster
        return in_place(statement, cluster or None)

    def missing_settings(self) -> str | None:
        """What a schedule says when it must skip: ``None`` when the warehouse is configured."""
        try:
            self.location()
        except PipelinesNotConfigured as exc:
            return str(exc)
        return None

    def get_client(self) -> Client:
        from stacklens.warehouse.client import is_embedded, warehouse_client, warehouse_client_in_turn

        url, database = self.location()
        if self.from_env and is_embedded(url):
            # A Dagster process (code server, run worker) over the embedded warehouse: the daemon's processes
            # take turns on its data directory, each holding it for one evaluation or step.
            return warehouse_client_in_turn(url, database, EMBEDDED_TURN_SECONDS)
        return warehouse_client(url, database)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        from stacklens.warehouse.client import is_embedded, release_client

        if self.from_env and self.missing_settings() is None:
            url, database = self.location()
            if is_embedded(url):
                release_client(url, database)


class ControlStoreResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The control store (budgets live there): its SQLAlchemy URL, or ``STACKLENS_DATABASE_URL`` when used."""

    database_url: str = Field(default="", description="SQLAlchemy URL of the control store.")
    from_env: bool = Field(default=False, description="Read STACKLENS_DATABASE_URL when used.")

    @contextmanager
    def session(self) -> Iterator[Session]:
        from stacklens.control.db import store_session

        url = _from_environment(("STACKLENS_DATABASE_URL",))[0] if self.from_env else self.database_url
        with store_session(url) as session:
            yield session


# Settings bound by resources_for in this process, by key: the alerting resource needs the whole settings (the
# server secret decrypts webhook signing secrets), which must never travel as resource config (the Dagster UI
# shows resource config).
_BOUND_SETTINGS: dict[str, Settings] = {}


class AlertingResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """What alert evaluation and delivery need beyond the stores: the server secret, the outbound allow-list,
    SMTP and the public URL of notification links — the service's settings."""

    bound: str = Field(
        default="",
        description="Key of settings bound in this process (embedded runs); empty: the STACKLENS_* variables, "
        "read when a run starts (scaled mode).",
    )

    def settings(self) -> Settings:
        found = _BOUND_SETTINGS.get(self.bound) if self.bound else None
        return found if found is not None else Settings()


def resources_for(settings: Settings) -> dict[str, dg.ConfigurableResource[Any]]:
    """Resources bound to ``settings`` (same URLs => the same cached clients as the server's)."""
    return {
        "warehouse": ClickHouseResource(
            url=settings.resolved_warehouse_url,
            database=settings.warehouse_database,
            cluster=settings.warehouse_cluster or "",
        ),
        "control_store": ControlStoreResource(database_url=settings.resolved_database_url),
        "alerting": AlertingResource(bound=_bind(settings)),
    }


def _bind(settings: Settings) -> str:
    key = f"{settings.resolved_database_url}|{settings.resolved_warehouse_url}|{settings.warehouse_database}"
    _BOUND_SETTINGS[key] = settings
    return key


def env_resources() -> dict[str, dg.ConfigurableResource[Any]]:
    """Resources that read ``STACKLENS_WAREHOUSE_URL``, ``STACKLENS_WAREHOUSE_DATABASE`` and
    ``STACKLENS_DATABASE_URL`` when a schedule ticks or a run starts, never at import (what ``dagster dev``
    loads). Unset, schedules skip with :data:`SCALED_SETTINGS_MISSING` rather than fail every minute."""
    return {
        "warehouse": ClickHouseResource(from_env=True),
        "control_store": ControlStoreResource(from_env=True),
        "alerting": AlertingResource(),
    }


def env_for(settings: Settings) -> dict[str, str]:
    """The variables :func:`env_resources` reads, for ``settings``: what a child Dagster process (the
    read-only UI) is started with. This process's own environment is left alone."""
    env = {
        "STACKLENS_WAREHOUSE_URL": settings.resolved_warehouse_url,
        "STACKLENS_WAREHOUSE_DATABASE": settings.warehouse_database,
        "STACKLENS_DATABASE_URL": settings.resolved_database_url,
    }
    if settings.warehouse_cluster:
        env["STACKLENS_WAREHOUSE_CLUSTER"] = settings.warehouse_cluster
    if settings.dagster_database_url:  # dagster.yaml names the variable (pipelines/instance.py)
        env["STACKLENS_DAGSTER_DATABASE_URL"] = settings.dagster_database_url
    return env
