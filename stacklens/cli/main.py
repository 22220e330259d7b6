"""The `stacklens` command. Each command group lives in its own module with a ``register(subparsers)``.

Bad input gets one clear line on stderr and exit status 2, never a traceback: commands raise
:class:`CliError` (or a known domain error) and :func:`main` prints it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence

from stacklens import __version__
from stacklens.cli.logs import configure_logging

# Modules that add subcommands; each exposes `register(subparsers: argparse._SubParsersAction) -> None`
# and sets `func=<callable(args) -> int | None>` on its parsers.
COMMAND_MODULES: tuple[str, ...] = (
    "stacklens.cli.migrate",
    "stacklens.cli.serve",
    "stacklens.cli.up",
    "stacklens.cli.admin",
    "stacklens.cli.demo",
    "stacklens.cli.pipelines",
    "stacklens.cli.budgets",
    "stacklens.cli.sourcemaps",
    "stacklens.cli.query",
    "stacklens.cli.sql",
    "stacklens.cli.operations",
    "stacklens.cli.annotate",
)


# Commands that keep nothing under the data directory (they talk to a server over HTTP with a key): they never
# create an installation, so they skip the check of :func:`_check_installation`.
DATA_DIR_FREE_COMMANDS = frozenset({"query", "sourcemaps"})
# Commands whose --host/--port name the address they will serve (elsewhere --port is another program's, e.g.
# `pipelines ui`'s Dagster UI).
LISTENING_COMMANDS = frozenset({"serve", "up"})


class CliError(Exception):
    """A user-facing failure: the message is printed as-is, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stacklens", description="StackLens server: API, dashboards, pipelines."
    )
    parser.add_argument("--version", action="version", version=f"stacklens {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _known_errors() -> tuple[type[BaseException], ...]:
    from pydantic import ValidationError

    from stacklens.errors import StackLensError
    from stacklens.settings import SettingsError
    from stacklens.warehouse.client import WarehouseUnavailable

    return (CliError, StackLensError, SettingsError, WarehouseUnavailable, ValidationError)


# Dagster marks `backfill_policy` beta; the marts use it on purpose, with dagster pinned (pyproject.toml). The
# warning tells an operator nothing to act on, and `stacklens pipelines run` printed it four times.
PINNED_DAGSTER_BETA = r"Parameter `backfill_policy` of function `asset` is currently in beta"


def main(argv: Sequence[str] | None = None) -> int:
    warnings.filterwarnings("ignore", message=PINNED_DAGSTER_BETA)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    configure_logging()
    try:
        _check_installation(args)
        result = args.func(args)
    except KeyboardInterrupt:
        return 130
    except _known_errors() as exc:
        print(f"stacklens: {_one_line(exc)}", file=sys.stderr)
        return 2
    return int(result or 0)


def _check_installation(args: argparse.Namespace) -> None:
    """Refuse to work on (or create) another installation than the server on the configured port serves; say
    so when this command is about to create one (stacklens/installation.py). `serve` and `up` look at the
    address they are told to listen on (`--host`, `--port`), the others at the settings'."""
    command = str(args.command)
    if command in DATA_DIR_FREE_COMMANDS:
        return
    from stacklens.installation import check_installation
    from stacklens.settings import get_settings

    settings = get_settings()
    if command in LISTENING_COMMANDS:
        listen = {"host": getattr(args, "host", None), "port": getattr(args, "port", None)}
        settings = settings.model_copy(update={k: v for k, v in listen.items() if v is not None})
    notice = check_installation(settings, command)
    if notice:
        print(notice, file=sys.stderr, flush=True)


def _one_line(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        return f"setting STACKLENS_{field.upper()}: {first.get('msg')}"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__


if __name__ == "__main__":
    # Run the imported module's main, not this `__main__` copy: commands raise `stacklens.cli.main.CliError`,
    # which is a different class from `__main__.CliError` under `python -m`.
    from stacklens.cli.main import main as _main

    sys.exit(_main())
