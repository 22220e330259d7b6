"""StackLens's domain core: ingest and its front door, the warehouse and the control store, issues, performance,
releases, logs and replays, alerts, Explore and dashboards, operations — and the `stacklens` CLI, the composition
root that mounts the adapters (``api/``, ``dashboards/``, ``pipelines/``) on it."""

__version__ = "0.1.0"
