"""`stacklens migrate` over an installation with data whose pending migrations rewrite data: it backs up first
(or not, with --no-backup), prints a line per step, and an interrupted run resumes where it stopped; each run
is in the maintenance log."""

from __future__ import annotations

import pytest

from stacklens.cli.main import main
from stacklens.control.db import session_scope
from stacklens.control.maintenance_log import list_runs
from stacklens.operations.backup import Manifest
from stacklens.settings import Settings
from stacklens.warehouse import migrations
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise LookupError("kept across the upgrade")


def _older_installation(settings: Settings, make_org) -> dict:
    """Migrated up to 0128 (before 0129 recreates issue_users), with events in it."""
    migrations.apply_migrations(settings, up_to=128)
    org = make_org("Acme")
    land(org["org_id"], org["project_id"], [sdk_event(_fail) for _ in range(5)])
    return org


def _events(settings: Settings) -> int:
    return int(get_warehouse(settings).query("SELECT count() FROM events").result_rows[0][0])


def test_migrate_backs_up_before_rewriting_and_resumes(settings, make_org, capsys, monkeypatch) -> None:
    _older_installation(settings, make_org)
    record = migrations._record
    calls = {"n": 0}

    def interrupted(*args, **kwargs):  # the third step is cut off before it is recorded
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return record(*args, **kwargs)

    monkeypatch.setattr(migrations, "_record", interrupted)
    assert main(["migrate"]) == 130
    out = capsys.readouterr().out
    assert "0129_recreate_issue_users" in out and "rewrite or drop data: backing up to" in out, out
    assert "warehouse: [1/" in out and "] applied 0129_recreate_issue_users (" in out
    backups = sorted((settings.data_dir / "backups").iterdir())
    assert len(backups) == 1 and Manifest.read(backups[0]).tables["events"]["rows"] == 5

    monkeypatch.setattr(migrations, "_record", record)
    assert main(["migrate", "--no-backup"]) == 0
    out = capsys.readouterr().out
    assert "steps to apply (" in out and "backing up" not in out, out
    assert not [s for s in migrations.migration_status(settings) if s.applied_at is None]
    assert _events(settings) == 5 and len(list((settings.data_dir / "backups").iterdir())) == 1
    assert main(["migrate"]) == 0 and "warehouse: up to date" in capsys.readouterr().out

    with session_scope(settings) as session:
        runs = list_runs(session)
    migrate_runs = [r for r in runs if r.kind == "migrate"]
    assert [r.outcome for r in migrate_runs] == ["succeeded", "failed"]
    assert "backed up first" not in migrate_runs[0].summary and migrate_runs[0].detail["applied"]
    assert "backed up first" in migrate_runs[1].summary and migrate_runs[1].duration_ms is not None
    assert [r.kind for r in runs].count("backup") == 1


def test_a_scaled_installation_is_refused_without_a_backup(settings, make_org) -> None:
    """Its warehouse is a server this command cannot copy: the operator backs up, then says --no-backup."""
    from stacklens.cli import migrate as migrate_cli
    from stacklens.cli.main import CliError

    _older_installation(settings, make_org)
    plan = migrations.plan_migrations(settings)

    class Scaled:  # these settings, as a scaled installation has them (the recorded state read from here)
        embedded_warehouse = False

        def __getattr__(self, name: str) -> object:
            return getattr(settings, name)

    class Args:
        no_backup = False
        backup_to = None

    with pytest.raises(CliError, match="take `stacklens backup --to DIR` first") as refused:
        migrate_cli._backup_first(Args(), Scaled(), plan)
    assert "0129_recreate_issue_users" in str(refused.value)
    Args.no_backup = True
    assert migrate_cli._backup_first(Args(), Scaled(), plan) is None


def test_backup_to_takes_a_folder_or_a_new_directory_and_says_which(
    settings, make_org, tmp_path, capsys
) -> None:
    """`--backup-to` a folder holding earlier backups gets a new before-migrate-<time> directory inside it
    (the earlier ones untouched); a path that does not exist, or an empty directory, holds the backup itself;
    an earlier backup's own directory and the data directory are refused, and nothing is migrated."""
    from stacklens.cli import migrate as migrate_cli
    from stacklens.cli.main import CliError

    _older_installation(settings, make_org)
    plan = migrations.plan_migrations(settings)
    folder = tmp_path / "backups"
    (folder / "earlier").mkdir(parents=True)
    (folder / "earlier" / "control.db").write_bytes(b"an earlier backup's bytes")

    class Args:
        no_backup = False
        backup_to: object = None

    def backed_up(given: object) -> tuple[object, str]:
        Args.backup_to = given
        made = migrate_cli._backup_first(Args(), settings, plan)
        return made, capsys.readouterr().out

    made, out = backed_up(tmp_path / "new" / "before-upgrade")
    assert made == tmp_path / "new" / "before-upgrade" and "first (a new directory)" in out, out
    assert Manifest.read(made).tables["events"]["rows"] == 5
    empty = tmp_path / "empty"
    empty.mkdir()
    made, out = backed_up(empty)
    assert made == empty and "(the empty directory given)" in out and Manifest.read(empty).id
    for refused, message in (
        (tmp_path / "new" / "before-upgrade", "holds a backup already"),
        (settings.data_dir, "is inside the data directory"),
    ):
        Args.backup_to = refused
        with pytest.raises(CliError, match=message):
            migrate_cli._backup_first(Args(), settings, plan)
    assert not list(settings.data_dir.glob("before-migrate-*"))
    capsys.readouterr()

    assert main(["migrate", "--backup-to", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"first (a new directory in the folder {folder})" in out, out
    made_in = [p for p in folder.iterdir() if p.name.startswith("before-migrate-")]
    assert len(made_in) == 1 and Manifest.read(made_in[0]).tables["events"]["rows"] == 5
    assert (folder / "earlier" / "control.db").read_bytes() == b"an earlier backup's bytes"
    assert not [s for s in migrations.migration_status(settings) if s.applied_at is None]
    assert _events(settings) == 5
