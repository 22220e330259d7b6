"""`stacklens-shipper`: the spec's command line (--version, --config with --validate/--test/--status,
--record, --verbose), and --resend-dead-letters. Bad input gets plain words and a non-zero exit, never a
traceback."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from shipper import __version__
from shipper.config import Config, ConfigError, load_config
from stacklens_contract.words import AUTHENTICATION_FAILED

log = logging.getLogger(__name__)
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def setup_logging(level: str, verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    # The package's logger: every shipper module logs under it (``shipper.agent``, ``shipper.state``, ...).
    package = logging.getLogger("shipper")
    package.handlers[:] = [handler]
    package.setLevel(logging.DEBUG if verbose else LEVELS.get(level, logging.INFO))
    package.propagate = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stacklens-shipper", description="Deliver StackLens log files to the service."
    )
    parser.add_argument("--version", action="version", version=f"stacklens-shipper {__version__}")
    parser.add_argument("--config", metavar="PATH", help="path of stacklens.yaml")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--validate", action="store_true", help="validate the configuration")
    mode.add_argument("--test", action="store_true", help="test the connection")
    mode.add_argument("--status", action="store_true", help="print status")
    mode.add_argument("--record", action="store_true", help="run the delivery loop")
    mode.add_argument(
        "--resend-dead-letters",
        action="store_true",
        help="send the lines kept in deadletter.ndjson again, once their cause is fixed; each lands once, "
        "and a line refused again stays there with the new reason",
    )
    parser.add_argument("--verbose", action="store_true", help="verbose output (with --record)")
    parser.add_argument("--json", action="store_true", help="with --status: print JSON")
    return parser


def _load(path: str, **kwargs: bool) -> Config:
    return load_config(path, **kwargs)


def _validate(path: str) -> int:
    try:
        config = _load(path)
    except ConfigError as exc:
        print(f"{path}: {len(exc.problems)} problem(s):", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    from shipper.config import storage_problems

    problems = storage_problems(config.storage_path)
    if problems:
        print(f"{path}: {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"{config.path}: configuration is valid")
    return 0


def _test(config: Config) -> int:
    from shipper.transport import Transport, network_error_name

    transport = Transport(config)
    try:
        ok, detail = transport.verify()
    except Exception as exc:  # noqa: BLE001 - httpx and ssl failures: named as in the spec's Errors table
        log.error("%s: %s", network_error_name(exc), config.base_url)
        return 1
    finally:
        transport.close()
    if not ok:
        if detail == AUTHENTICATION_FAILED:
            log.error(
                "%s: check apiKey in %s (the API key, not the application key)",
                AUTHENTICATION_FAILED,
                config.path,
            )
        else:
            log.error("%s", detail)
        return 1
    log.info("Connected to stacklens (organization: %s)", detail)
    return 0


def _status(config: Config, as_json: bool) -> int:
    from shipper.status import collect, render

    status = collect(config)
    try:
        print(json.dumps(status, indent=2) if as_json else render(status), flush=True)
    except BrokenPipeError:
        # The reader stopped early (`--status --json | head`): what it read is what it wanted, no traceback.
        # stdout is pointed at /dev/null so the interpreter's own flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    # Exit 1 when something the shipper needs cannot be read, so scripts and health checks notice.
    unreadable = any(p.startswith("Storage path") for p in status["problems"]) or any(
        "error" in row for row in status["files"]
    )
    return 1 if unreadable else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not (args.validate or args.test or args.status or args.record or args.resend_dead_letters):
        parser.print_usage(sys.stderr)
        print(
            "stacklens-shipper: choose one of --validate, --test, --status, --record or --resend-dead-letters",
            file=sys.stderr,
        )
        return 2
    if not args.config:
        print("stacklens-shipper: --config PATH is required", file=sys.stderr)
        return 2
    if args.verbose and not args.record:
        print("stacklens-shipper: --verbose goes with --record", file=sys.stderr)
        return 2
    if args.validate:
        return _validate(args.config)
    try:
        config = _load(args.config, require_storage=not args.record)
    except ConfigError as exc:
        print(f"stacklens-shipper: {args.config} is not usable:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        print("run stacklens-shipper --config PATH --validate after fixing it", file=sys.stderr)
        return 1
    verbose = args.verbose or config.verbose
    setup_logging(config.log_level, verbose)
    if args.test:
        return _test(config)
    if args.status:
        return _status(config, args.json)
    if args.resend_dead_letters:
        from shipper.resend import run as resend

        return resend(config)
    if verbose and not config.verbose:
        from dataclasses import replace

        config = replace(config, verbose=True)
    from shipper.agent import run

    try:
        return run(config)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
