"""The engine's BACKUP and RESTORE statements: names checked, paths written as escaped literals."""

from __future__ import annotations

import pytest

from stacklens.operations.engine_backup import Destination, backup_statement, literal, restore_statement


def test_statements_quote_paths_and_check_names() -> None:
    assert literal("/a/it's\\x") == "'/a/it\\'s\\\\x'"
    to = Destination("File", ("/b/o'k",))
    assert backup_statement("stacklens", to) == "BACKUP DATABASE stacklens TO File('/b/o\\'k')"
    base = Destination("Disk", ("backups", "full-1"))
    assert backup_statement("db", Destination("Disk", ("backups", "incr-1")), base, " ON CLUSTER 'c'") == (
        "BACKUP DATABASE db ON CLUSTER 'c' TO Disk('backups', 'incr-1') SETTINGS base_backup = "
        "Disk('backups', 'full-1')"
    )
    assert restore_statement("old", "new", to) == "RESTORE DATABASE old AS new FROM File('/b/o\\'k')"
    assert restore_statement("same", "same", to) == "RESTORE DATABASE same FROM File('/b/o\\'k')"
    with pytest.raises(ValueError, match="not a database name"):
        backup_statement("x; DROP DATABASE y", to)
