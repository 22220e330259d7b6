"""`stacklens budgets list|set|delete|import|export --project SLUG …`: performance budgets.

Budgets live in the control store (shared with a running server). Their status (pass / fail / insufficient
data), current value and samples come from the warehouse: opened directly, or — while `stacklens serve` owns
the embedded warehouse — asked of that server through its local pipelines door.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from stacklens.cli.main import CliError
from stacklens.metrics import catalog

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy.orm import Session

    from stacklens.control.models import Project


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from stacklens.performance.budget_rules import BUDGET_METRICS, STATISTICS

    parser = subparsers.add_parser("budgets", help="list, set, delete, import or export performance budgets")
    commands = parser.add_subparsers(dest="budgets_command", metavar="ACTION", required=True)
    metrics = ", ".join(BUDGET_METRICS)

    p = commands.add_parser("list", help="the project's budgets with value, status and samples")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_list)

    p = commands.add_parser("set", help="create a budget or change it")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--metric", required=True, help=f"one of {metrics}")
    p.add_argument(
        "--scope", default="*", help="a page route or pattern (/checkout, /products/*); * = all pages"
    )
    p.add_argument(
        "--value", required=True, help="the budget: passes while the current value is at most this"
    )
    p.add_argument("--statistic", default=None, help=f"one of {', '.join(STATISTICS)} (default p75)")
    p.add_argument("--window", default=None, help="days the value is taken over, 1-30 (default 7)")
    p.add_argument("--min-samples", default=None, help="fewer samples is insufficient data (default 20)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_set)

    p = commands.add_parser("delete", help="delete the budget of a metric on a scope")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--metric", required=True, help=f"one of {metrics}")
    p.add_argument("--scope", default="*", help="the budget's scope (default *)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_delete)

    p = commands.add_parser("import", help="import a Lighthouse CI budget.json (all or nothing)")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("file", help="the budget.json file, or - for standard input")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_import)

    p = commands.add_parser("export", help="print the budgets as a Lighthouse CI budget.json")
    p.add_argument("--project", required=True, help="project slug")
    p.set_defaults(func=_export)


def _project(session: Session, slug: str) -> Project:
    from stacklens.control.errors import AccountError
    from stacklens.control.projects import project_by_slug

    try:
        return project_by_slug(session, slug)
    except AccountError as exc:
        raise CliError(str(exc)) from exc


def _session() -> AbstractContextManager[Session]:
    from stacklens.cli.admin import control_session

    return control_session()


def _from_warehouse(slug: str, key: str, compute: Callable[[Any], Any]) -> Any:
    """``compute(warehouse client)``, or the ``key`` of the answer of the server that owns the embedded
    warehouse (``budgets`` or ``pages``); ``None``, with a note on stderr, when neither answers."""
    from stacklens.server_link import ServerUnreachable, call_server, read_link
    from stacklens.settings import get_settings
    from stacklens.warehouse.client import WarehouseUnavailable, get_warehouse

    settings = get_settings()
    link = read_link(settings) if settings.embedded_warehouse else None
    if link is not None:
        try:
            return call_server(link, "GET", f"/api/pipelines/budgets?project={quote(slug)}")[key]
        except (ServerUnreachable, RuntimeError):
            pass  # a stale link: opening the warehouse tells the truth
    try:
        return compute(get_warehouse(settings))
    except WarehouseUnavailable as exc:
        print(f"note: the warehouse does not answer ({exc})", file=sys.stderr)
        return None


def _pages(slug: str, project_id: int) -> list[str] | None:
    """The pages the project has data for (a scoped budget must match one); ``None``: not checked."""
    from stacklens.performance.budget_status import pages_seen

    pages: list[str] | None = _from_warehouse(slug, "pages", lambda client: pages_seen(client, project_id))
    return pages


def _list(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import list_budgets

    with _session() as session:
        rows = list_budgets(session, _project(session, args.project))
    from stacklens.json_values import plain
    from stacklens.performance.budget_status import with_status

    listed = _from_warehouse(args.project, "budgets", lambda client: plain(with_status(client, rows)))
    if listed is None:
        listed = [{**asdict(r), "status": "unknown"} for r in rows]
    if args.json:
        print(json.dumps({"budgets": listed}))
        return 0
    if not listed:
        print(f"no budgets in {args.project}")
    for row in listed:
        budget, current = (
            _amount(row["metric"], row["value"]),
            _amount(row["metric"], row.get("current_value")),
        )
        print(
            f"{row['id']}  {row['metric']:<14} {row['statistic']:<4} {row['scope']:<20} {_bound(row['metric'])} {budget}"
            f"  now {current}  {str(row['status']).upper():<17}  {_count(row.get('samples'))} samples"
            f" (min {row['min_samples']}, {row['window_days']}d)"
            + (f"  {row['error']}" if row.get("error") else "")
        )
    return 0


def _amount(metric: str, value: float | None) -> str:
    """A budget value as the budgets page writes it (the metric catalog: ``712.9 KiB``, ``2,004.9 ms``)."""
    from stacklens.metrics.catalog import find
    from stacklens.metrics.formatting import format_value
    from stacklens.metrics.units import MISSING, plain_number

    if find(metric) is not None:
        return format_value(metric, value)
    return MISSING if value is None else plain_number(value)  # a metric this version does not know


def _count(value: int | None) -> str:
    """A sample count as the pages and the PDF write it (``1,070``); ``?`` when the warehouse did not
    answer."""
    from stacklens.metrics.units import COUNT, format_in

    return "?" if value is None else format_in(COUNT, value)


def _set(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import set_budget
    from stacklens.performance.budget_rules import BudgetError, validate_budget

    with _session() as session:
        project = _project(session, args.project)
        try:
            # Fields first: a bad one is named without opening the warehouse for the pages seen.
            scope = validate_budget(args.metric, args.scope, args.value).scope
            pages = _pages(args.project, project.id) if scope != "*" else None
            row, created = set_budget(
                session,
                project,
                args.metric,
                args.scope,
                args.value,
                args.statistic,
                args.window,
                args.min_samples,
                pages,
            )
        except BudgetError as exc:
            raise CliError(str(exc)) from exc
    if args.json:
        print(json.dumps({**asdict(row), "created": created}))
    else:
        print(
            f"{'created' if created else 'changed'} budget {row.id}: {row.metric} {row.statistic} on {row.scope}"
            f" {_bound(row.metric)} {_amount(row.metric, row.value)} over {row.window_days}d (min {row.min_samples} samples)"
        )
    return 0


def _delete(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import delete_budget

    with _session() as session:
        deleted = delete_budget(session, _project(session, args.project), args.metric, args.scope)
    if not deleted:
        raise CliError(f"no {args.metric} budget on {args.scope} in {args.project}")
    if args.json:
        print(json.dumps({"deleted": True}))
    else:
        print(f"deleted the {args.metric} budget on {args.scope}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import import_budgets
    from stacklens.performance import lighthouse_budgets
    from stacklens.performance.budget_rules import BudgetError

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from exc
    with _session() as session:
        project = _project(session, args.project)
        try:
            parsed = lighthouse_budgets.parse(text, _pages(args.project, project.id))
        except BudgetError as exc:
            raise CliError(f"nothing imported: {exc}") from exc
        rows, created = import_budgets(session, project, parsed.budgets)
    if args.json:
        print(
            json.dumps(
                {
                    "budgets": [asdict(r) for r in rows],
                    "created": created,
                    "updated": len(rows) - created,
                    "not_mapped": parsed.not_mapped,
                }
            )
        )
        return 0
    print(f"imported {len(rows)} budgets into {args.project} ({created} new, {len(rows) - created} changed)")
    for line in parsed.not_mapped:
        print(f"  not mapped: {line}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import list_budgets
    from stacklens.performance import lighthouse_budgets

    with _session() as session:
        rows = list_budgets(session, _project(session, args.project))
    entries, skipped = lighthouse_budgets.export(rows)
    print(json.dumps(entries, indent=2))
    for line in skipped:
        print(f"not exported: {line}", file=sys.stderr)
    return 0


def _bound(metric: str) -> str:
    """A budget is a floor (``>=``) where higher is better (uptime), else a ceiling (``<=``)."""
    found = catalog.find(metric)
    return ">=" if found is not None and found.better == "higher" else "<="
