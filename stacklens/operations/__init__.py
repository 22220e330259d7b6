"""Operations of an installation (docs/operations.md): backup and restore, storage figures, retention runs.

:mod:`~stacklens.operations.backup` writes a backup directory (the warehouse through the engine's own
``BACKUP``, the control store and the Dagster instance's SQLite files through SQLite's online backup, a
manifest with per-table checksums); :mod:`~stacklens.operations.sealing` encrypts one with a passphrase;
:mod:`~stacklens.operations.restore` brings one back into an empty data directory;
:mod:`~stacklens.operations.scaled` is the same for a ClickHouse server and PostgreSQL (statements and
commands); :mod:`~stacklens.operations.storage` measures the disk; :mod:`~stacklens.operations.retention`
deletes what a project's retention no longer keeps.
"""
