"""StackLens server core: settings, control store, warehouse, ingest, keys and the `stacklens` CLI."""

__version__ = "0.1.0"
