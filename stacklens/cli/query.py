"""`stacklens query`: an Explore query against the running server (``--url`` or ``STACKLENS_URL``, the
organization API key ``--api-key`` or ``STACKLENS_API_KEY``), printed as a table, CSV, JSON or written as
Parquet. It asks the server over HTTP, so it works while `stacklens serve` owns the embedded warehouse.

    stacklens query pageloads --group-by release --agg count --agg p75:lcp_ms --range 30d
    stacklens query errors --filter 'environment|=|production' --group-by tag:region --format csv
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from stacklens.client import ExploreFilter, StackLens, StackLensError, query_body

DEFAULT_URL = "http://127.0.0.1:8000"
FORMATS = ("table", "csv", "parquet", "json")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("query", help="run an Explore query through the running server")
    p.add_argument("dataset", help="errors, pageloads, resources or api_calls")
    p.add_argument("--project", default="", help="project slug (default: every project of the organization)")
    p.add_argument(
        "--filter", action="append", default=[], help="FIELD|OP|VALUE (ops: = != in contains >= <; in: a,b,c)"
    )
    p.add_argument("--group-by", action="append", default=[], help="a field or tag:KEY (up to 3)")
    p.add_argument("--agg", action="append", default=[], help="FN or FN:METRIC, e.g. count, p75:lcp_ms")
    p.add_argument("--interval", default="", help="5m, 15m, 1h, 6h, 1d or 1w (json only: the series)")
    p.add_argument("--range", default="", help="24h, 7d, 14d, 30d or 90d (default 7d)")
    p.add_argument("--since", default="", help="ISO 8601 start (instead of --range)")
    p.add_argument("--until", default="", help="ISO 8601 end")
    p.add_argument("--order-by", default="", help="a column, - for descending")
    p.add_argument("--limit", type=int, default=None, help="rows (default 100; files up to 1,000,000)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--output", "-o", default="", help="write to this file (required for parquet)")
    p.add_argument(
        "--url", default=None, help=f"the StackLens server (default $STACKLENS_URL or {DEFAULT_URL})"
    )
    p.add_argument("--api-key", default=None, help="organization API key (default $STACKLENS_API_KEY)")
    p.set_defaults(func=run)


def _filters(raw: list[str]) -> list[ExploreFilter]:
    from stacklens.cli.main import CliError

    out: list[ExploreFilter] = []
    for text in raw:
        parts = text.split("|", 2)
        if len(parts) != 3:
            raise CliError(f"--filter {text!r}: write FIELD|OP|VALUE, e.g. 'release|=|shop@1.2.0'")
        field, op, value = parts
        out.append({"field": field, "op": op, "value": value.split(",") if op == "in" else value})
    return out


def table_text(columns: list[str], rows: list[dict[str, object]]) -> str:
    """Rows as aligned plain-text columns (numbers with at most 2 decimals)."""

    def cell(value: object) -> str:
        if value is None:
            return "—"
        if isinstance(value, float):
            return f"{value:,.2f}"
        return str(value)

    cells = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError

    url = (args.url or os.environ.get("STACKLENS_URL") or DEFAULT_URL).rstrip("/")
    key = args.api_key or os.environ.get("STACKLENS_API_KEY") or ""
    if not key:
        raise CliError("give the organization API key with --api-key or STACKLENS_API_KEY")
    if args.format == "parquet" and not args.output:
        raise CliError("--format parquet writes a file: add --output FILE")
    body = query_body(
        args.dataset,
        project=args.project,
        filters=_filters(args.filter),
        group_by=args.group_by,
        aggregates=args.agg,
        interval=args.interval,
        range=args.range,
        since=args.since,
        until=args.until,
        order_by=args.order_by,
        limit=args.limit,
    )
    spec = {k: v for k, v in body.items() if k != "dataset"}
    with StackLens(url, key) as client:
        payload = _fetch(client, args, spec)
    if args.output:
        with open(args.output, "wb") as out:
            out.write(payload)
    else:
        sys.stdout.buffer.write(payload)
        sys.stdout.flush()
    return 0


def _fetch(client: StackLens, args: argparse.Namespace, spec: dict[str, object]) -> bytes:
    from stacklens.cli.main import CliError

    try:
        if args.format == "table":
            data = client.query(args.dataset, **spec)
            text = table_text(data["columns"], data["rows"])
            if data["meta"]["truncated"]:
                text += "\n(truncated: raise --limit or download with --format csv)"
            payload: bytes = (text + "\n").encode()
        elif args.format == "json" and args.interval:
            payload = (json.dumps(client.query(args.dataset, **spec)) + "\n").encode()
        else:
            payload = client.download(args.dataset, args.format, **spec)
    except StackLensError as exc:
        raise CliError(str(exc)) from None
    return payload
