"""StackLens's domain core; ``api/``, ``dashboards/`` and ``pipelines/`` are adapters over it
(docs/architecture.md §4).

One package or module per topic: ingest with its front door and the Sentry and OpenTelemetry entrances
(``ingest``), the warehouse's client, migrations and named queries (``warehouse``), the control store
(``control``), issues, performance, release health, logs, session replays and source maps, the metric catalog
(``metrics``), alert rules and their outbox, issue-tracker integrations, Explore with its dashboards and
reports, outcomes, operations (backup, restore, retention) and the service watching itself (``self_watch``);
beside them the settings, the domain errors and the one client of calls to the outside (``outbound``).

The core imports no adapter, no web or orchestration framework (FastAPI, Starlette, Jinja2, Dagster, uvicorn,
plotly) and not the demo; ``tests/test_layout.py`` checks every import. The composition root,
``stacklens.cli`` (the ``stacklens`` command), may import the adapters, and only it: it builds the API with
the dashboards installed on it and gives ``stacklens serve`` the pipelines' runner. It too never imports
the demo."""

__version__ = "0.1.0"
