"""`stacklens sql "SELECT …"`: the installation operator's read-only SQL through the running server.

The server that owns the embedded warehouse wrote its local URL and token to ``<data_dir>/pipelines_token``
(mode 0600: only the service's user reads it); this command presents that token, so it works while `stacklens
serve` holds the warehouse, and never with an organization's API key. The server judges the statement with the
engine's parser first (stacklens.explore.statement_guard) and runs it on a connection of its own, with the
per-query time and memory limits.
"""

from __future__ import annotations

import argparse
import json
import sys

from stacklens.cli.query import table_text


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("sql", help="run one read-only SQL statement through the running server")
    p.add_argument("statement", help='e.g. "SELECT release, count() FROM events GROUP BY release"')
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError
    from stacklens.server_link import ServerUnreachable, call_server, read_link
    from stacklens.settings import get_settings

    link = read_link(get_settings())
    if link is None:
        raise CliError("no running server: start `stacklens serve` (stacklens sql asks it, read-only)")
    try:
        data = call_server(link, "POST", "/api/explore/sql", {"sql": args.statement})
    except ServerUnreachable:
        raise CliError(f"the server at {link.url} does not answer; is `stacklens serve` running?") from None
    except RuntimeError as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        sys.stdout.write(json.dumps(data) + "\n")
    else:
        text = table_text(data["columns"], data["rows"])
        if data["meta"]["truncated"]:
            text += "\n(truncated at 100,000 rows)"
        sys.stdout.write(text + "\n")
    return 0
