-- The Dagster instance gets a database of its own: it keeps an alembic_version table, like the control store.
CREATE DATABASE dagster OWNER stacklens;
