from __future__ import annotations

import logging
import socket

import pytest

from stacklens.cli.main import main
from stacklens.cli.serve import log_startup
from stacklens.settings import Settings


def test_serve_refuses_a_busy_port_in_one_line(settings: Settings, capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
        assert main(["up", "--port", str(port)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(f"cannot listen on 127.0.0.1:{port}" in line for line in err)


def test_startup_is_logged_with_address_data_dir_and_warehouse(settings: Settings, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="stacklens.cli.serve"):
        log_startup(settings, "0.0.0.0", 8123)
        server = settings.model_copy(
            update={"warehouse_url": "https://stacklens:s3cret@ch.example:8443", "warehouse_database": "prod"}
        )
        log_startup(server, "127.0.0.1", 9000)
    embedded, wildcard, remote = (r.getMessage() for r in caplog.records if r.name == "stacklens.cli.serve")
    assert embedded.startswith("StackLens is serving on http://127.0.0.1:8123 (API docs: /docs)")
    assert wildcard.startswith(
        "listening on every interface: links in alerts, share links and DSNs point at "
    )
    assert "http://127.0.0.1:8123; set STACKLENS_PUBLIC_URL" in wildcard
    assert f"listening on 0.0.0.0:8123, data dir {settings.data_dir}" in embedded
    assert "warehouse: embedded ClickHouse (chdb) in " in embedded
    assert remote.endswith("warehouse: ClickHouse server at https://ch.example:8443, database prod")
    assert "s3cret" not in remote


def test_a_beat_that_purged_releases_the_library_pages_a_quiet_one_does_nothing(
    settings: Settings, monkeypatch
) -> None:
    """Each beat after warehouse calls gives the engine library's pages back (the statements of a pipeline run
    or a backfill's drains each map different code); a quiet warehouse is neither purged nor released, so an
    idle server does nothing on the beat (issue 63, the footprint)."""
    from stacklens import c_allocator
    from stacklens.cli import serve
    from stacklens.warehouse import engine
    from stacklens.warehouse.calls import PURGES_AFTER_LAST_CALL
    from stacklens.warehouse.client import ensure_database, get_warehouse

    released: list[str] = []
    monkeypatch.setattr(engine, "release_library_pages", lambda: released.append("library") or True)
    monkeypatch.setattr(c_allocator, "release_freed_memory", lambda: released.append("heap") or True)
    ensure_database(settings)
    get_warehouse(settings).query("SELECT 1")
    assert serve.purge_engine_memory_quietly(settings) and released == ["heap", "library"]
    for _ in range(PURGES_AFTER_LAST_CALL):
        serve.purge_engine_memory_quietly(settings)
    released.clear()
    assert not serve.purge_engine_memory_quietly(settings) and released == []  # quiet: nothing to do
    get_warehouse(settings).query("SELECT 1")
    assert serve.purge_engine_memory_quietly(settings) and released == ["heap", "library"]


def test_the_front_doors_start_up_statements_release_their_pages_however_they_end(
    settings: Settings, monkeypatch
) -> None:
    """The recovery and index run once per start, right after the start's own release: the pages their
    statements mapped back are released when they end, failed or not."""
    from stacklens.cli import serve
    from stacklens.warehouse import engine

    released: list[bool] = []
    monkeypatch.setattr(engine, "release_library_pages", lambda: released.append(True) or True)

    def failing(_settings: Settings) -> None:
        raise RuntimeError("the spool could not be read")

    serve._recover_then_release(settings, lambda _settings: None)
    with pytest.raises(RuntimeError):
        serve._recover_then_release(settings, failing)
    assert released == [True, True]
