"""`stacklens pipelines run [--select KEY …]`, `backfill --from DAY --to DAY`, `status`, `ui`, `dev` and
`instance`.

`run`, `backfill` and `status` go through the running `stacklens serve` when it owns the embedded warehouse
(its token file ``<data_dir>/pipelines_token`` says where it listens); otherwise they open the warehouse
directly."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from stacklens.cli.main import CliError
from stacklens.settings import Settings, get_settings

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace.yaml"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "pipelines", help="Materialize the marts now, show their runs, open the UI."
    )
    commands = parser.add_subparsers(dest="pipelines_command", metavar="COMMAND")
    run = commands.add_parser("run", help="Materialize the marts that have new data now.")
    run.add_argument(
        "--select", nargs="+", metavar="KEY", help="Only jobs holding these assets (e.g. issues)."
    )
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(func=_run)
    backfill = commands.add_parser(
        "backfill",
        help="Rebuild the daily-partitioned marts for a range of days (one run per job, like a Dagster "
        "backfill of a partition range).",
    )
    backfill.add_argument("--from", dest="first", required=True, metavar="YYYY-MM-DD", help="first day")
    backfill.add_argument("--to", dest="last", required=True, metavar="YYYY-MM-DD", help="last day, included")
    backfill.add_argument(
        "--select", nargs="+", metavar="KEY", help="Only jobs holding these assets (e.g. pageload_periods)."
    )
    backfill.add_argument("--json", action="store_true", help="print one JSON object")
    backfill.set_defaults(func=_backfill)
    status = commands.add_parser("status", help="Recent runs, failed runs and the rows of every mart.")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=_status)
    ui = commands.add_parser("ui", help="Open the Dagster UI (read-only) over the pipelines' instance.")
    ui.add_argument("--port", type=int, default=3070)
    ui.set_defaults(func=_ui)
    dev = commands.add_parser(
        "dev",
        help="Run `dagster dev -w workspace.yaml` for a scaled installation, with this installation's "
        "settings; stops on SIGINT and SIGTERM however it was started.",
    )
    dev.add_argument("--port", type=int, default=3070, help="the Dagster UI's port (default 3070)")
    dev.set_defaults(func=_dev)
    instance = commands.add_parser(
        "instance",
        help="Write the Dagster instance's dagster.yaml (PostgreSQL storage with STACKLENS_DAGSTER_DATABASE_URL) "
        "into DAGSTER_HOME, else <data_dir>/dagster, and print it.",
    )
    instance.set_defaults(func=_instance)

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=_help)


def _through_server(settings: Settings, method: str, path: str, payload: dict[str, Any] | None) -> Any:
    """The server's answer when a server owns the embedded warehouse, else ``None`` (run directly)."""
    from stacklens.server_link import ServerUnreachable, call_server, read_link

    if not settings.embedded_warehouse:
        return None
    link = read_link(settings)
    if link is None:
        return None
    try:
        return call_server(link, method, path, payload)
    except ServerUnreachable:
        return None  # a stale file from a server that died; opening the warehouse tells the truth
    except RuntimeError as exc:
        raise CliError(str(exc)) from exc


def _check_selection(select: list[str] | None) -> None:
    """A :class:`CliError` naming the unknown assets of ``select`` and the known ones."""
    if not select:
        return
    from pipelines.definitions import defs

    known = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    unknown = sorted(set(select) - known)
    if unknown:
        raise CliError(f"unknown asset {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def _run(args: argparse.Namespace) -> int:
    settings = get_settings()
    # The definitions are loaded here only to run directly, or to name the known assets of a selection the
    # server refused: a run through the server spent 1.5-2 s of CPU importing them only to check the names
    # the server checks again.
    try:
        answer = _through_server(settings, "POST", "/api/pipelines/run", {"select": args.select})
    except CliError:
        _check_selection(args.select)
        raise
    via = "server"
    if answer is None:
        _check_selection(args.select)
        answer, via = {"outcomes": _run_directly(settings, args.select)}, "direct"
    outcomes = answer["outcomes"]
    if args.json:
        print(json.dumps({"via": via, **answer}))
        return 0 if all(o["success"] for o in outcomes) else 1
    if not outcomes:
        print("nothing to do: no new data since the last run")
    _print_outcomes(outcomes)
    return 0 if all(o["success"] for o in outcomes) else 1


def _backfill(args: argparse.Namespace) -> int:
    from pipelines.backfill_range import BackfillError, parse_range

    settings = get_settings()
    try:
        days = parse_range(args.first, args.last)  # checked here too: a bad day never waits for a server
    except BackfillError as exc:
        raise CliError(str(exc)) from exc
    payload = {"from": args.first, "to": args.last, "select": args.select}
    answer = _through_server(settings, "POST", "/api/pipelines/backfill", payload)
    via = "server"
    if answer is None:
        answer, via = {"outcomes": _backfill_directly(settings, days, args.select)}, "direct"
    outcomes = answer["outcomes"]
    if args.json:
        print(json.dumps({"via": via, "from": args.first, "to": args.last, **answer}))
        return 0 if all(o["success"] for o in outcomes) else 1
    print(f"backfill {days.first} … {days.last} ({days.days} day{'s' if days.days != 1 else ''}):")
    _print_outcomes(outcomes)
    return 0 if all(o["success"] for o in outcomes) else 1


def _backfill_directly(settings: Settings, days: Any, select: list[str] | None) -> list[dict[str, Any]]:
    from pipelines.backfill import run_backfill
    from pipelines.backfill_range import BackfillError
    from pipelines.definitions import definitions_for
    from pipelines.embedded import dagster_instance
    from stacklens.warehouse.client import get_warehouse

    get_warehouse(settings)  # raises WarehouseUnavailable, with what to do, when another process owns it
    instance = dagster_instance(settings)
    try:
        return [o.as_dict() for o in run_backfill(definitions_for(settings), instance, days, select)]
    except BackfillError as exc:
        raise CliError(str(exc)) from exc
    finally:
        instance.dispose()


def _print_outcomes(outcomes: list[dict[str, Any]]) -> None:
    for outcome in outcomes:
        state = "ok" if outcome["success"] else f"FAILED: {outcome['error']}"
        print(f"{outcome['job']}: run {outcome['run_id']} {state}")
        for asset, count in outcome["assets"].items():
            print(f"  {asset}: {'?' if count is None else count} rows")
        for check, passed in outcome["checks"].items():
            print(f"  check {check}: {'passed' if passed else 'FAILED'}")


def _run_directly(settings: Settings, select: list[str] | None) -> list[dict[str, Any]]:
    from pipelines.definitions import definitions_for
    from pipelines.embedded import dagster_instance, materialize_now
    from stacklens.warehouse.client import get_warehouse

    # Opening the warehouse raises WarehouseUnavailable, with what to do, when another process owns it.
    get_warehouse(settings)
    instance = dagster_instance(settings)
    try:
        return [o.as_dict() for o in materialize_now(definitions_for(settings), instance, select)]
    finally:
        instance.dispose()


def _status(args: argparse.Namespace) -> int:
    settings = get_settings()
    answer = _through_server(settings, "GET", "/api/pipelines/status", None)
    if answer is None:
        from pipelines.embedded import dagster_instance
        from pipelines.status import pipeline_status
        from stacklens.warehouse.client import get_warehouse

        client = get_warehouse(settings)
        instance = dagster_instance(settings)
        try:
            answer = pipeline_status(client, instance)
        finally:
            instance.dispose()
    if args.json:
        print(json.dumps(answer))
        return 0
    print("recent runs:" if answer["runs"] else "no runs yet")
    for run in answer["runs"]:
        jobs = ",".join(run.get("jobs") or [run["job"]])
        print(f"  {run['started_at'] or '-'}  {jobs:<18} {run['status']:<9} {run['run_id']}")
    print(f"failed runs: {len(answer['failures'])}")
    for run in answer["failures"]:
        print(f"  {run['ended_at'] or '-'}  {run['job']}  {run['run_id']}")
    print("mart rows:")
    for table, count in answer["marts"].items():
        print(f"  {table}: {count}")
    return 0


def _ui(args: argparse.Namespace) -> int:
    from pipelines.embedded import dagster_instance
    from pipelines.resources import env_for

    settings = get_settings()
    dagster_instance(settings).dispose()  # creates <data_dir>/dagster and its dagster.yaml when missing
    binary = shutil.which("dagster-webserver") or str(Path(sys.executable).with_name("dagster-webserver"))
    env = {**os.environ, **env_for(settings), "DAGSTER_HOME": str(settings.dagster_home)}
    command = [binary, "-w", str(WORKSPACE), "--read-only", "-h", "127.0.0.1", "-p", str(args.port)]
    # Dagster's home page is the runs' timeline; the asset graph (the data-flow documentation) has its own
    # address, printed first. The UI is read-only: runs and backfills are launched by the server that owns the
    # embedded warehouse (`stacklens pipelines run`, `stacklens pipelines backfill --from --to`).
    print(f"Dagster UI (read-only): asset graph at http://127.0.0.1:{args.port}/asset-groups", flush=True)
    print(
        "  materialize and backfill with `stacklens pipelines run` and "
        "`stacklens pipelines backfill --from YYYY-MM-DD --to YYYY-MM-DD` (the server owns the warehouse)",
        flush=True,
    )
    return subprocess.call(command, env=env)


def _instance(_args: argparse.Namespace) -> int:
    """What dagster-daemon and dagster-webserver read: written where DAGSTER_HOME points (they are started
    with it), else into this installation's own Dagster home."""
    from pipelines.instance import write_instance_config

    settings = get_settings()
    home = Path(os.environ["DAGSTER_HOME"]) if os.environ.get("DAGSTER_HOME") else settings.dagster_home
    path = write_instance_config(settings, home)
    print(f"# {path}")
    print(path.read_text(), end="")
    return 0


def _dev(args: argparse.Namespace) -> int:
    """Replace this process with `dagster dev` (webserver + daemon) over the installation's stores."""
    from pipelines.resources import env_for

    settings = get_settings()
    if settings.embedded_warehouse:
        raise CliError(
            "this installation's warehouse is embedded (chdb): it belongs to `stacklens serve`, which runs the "
            "pipelines on their schedules itself. Use `stacklens pipelines status`, `stacklens pipelines run` "
            "or the read-only UI `stacklens pipelines ui`; `dagster dev` is for a scaled installation "
            "(STACKLENS_WAREHOUSE_URL=http(s)://…:8123, STACKLENS_DATABASE_URL)"
        )
    from pipelines.instance import write_instance_config

    write_instance_config(settings)
    binary = shutil.which("dagster") or str(Path(sys.executable).with_name("dagster"))
    env = {**os.environ, **env_for(settings), "DAGSTER_HOME": str(settings.dagster_home)}
    # Dagster stops on SIGTERM by giving it SIGINT's handler; a process started in the background by a script
    # inherits SIGINT ignored, and an ignored signal stays ignored across exec, so neither would stop it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    print(f"dagster dev on http://127.0.0.1:{args.port} (DAGSTER_HOME={settings.dagster_home})", flush=True)
    os.execvpe(binary, [binary, "dev", "-w", str(WORKSPACE), "-p", str(args.port)], env)
    return 0  # not reached: exec replaced this process
