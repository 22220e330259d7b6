"""`stacklens budgets list|set|delete --project SLUG …`: performance budgets in the control store.

Works while a server runs (the control store is shared); the `budget_status` mart evaluates the budgets on
its next run (every 5 minutes, or `stacklens pipelines run --select budget_status`).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from stacklens.cli.main import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    from stacklens.performance.budget_rules import BUDGET_METRICS

    parser = subparsers.add_parser("budgets", help="list, set or delete a project's performance budgets")
    commands = parser.add_subparsers(dest="budgets_command", metavar="ACTION", required=True)
    metrics = ", ".join(BUDGET_METRICS)

    p = commands.add_parser("list", help="the project's budgets")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_list)

    p = commands.add_parser("set", help="create a budget or change its value")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--metric", required=True, help=f"one of {metrics}")
    p.add_argument("--scope", default="*", help="a page route such as /checkout; * (default) = the project")
    p.add_argument(
        "--value", required=True, help="the budget: passes while the current value is at most this"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_set)

    p = commands.add_parser("delete", help="delete the budget of a metric on a scope")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--metric", required=True, help=f"one of {metrics}")
    p.add_argument("--scope", default="*", help="the budget's scope (default *)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_delete)


def _project(session, slug: str):  # noqa: ANN001, ANN202 - SQLAlchemy session and model
    from stacklens.control.accounts import AccountError, project_by_slug

    try:
        return project_by_slug(session, slug)
    except AccountError as exc:
        raise CliError(str(exc)) from exc


def _session():  # noqa: ANN202 - a context manager over a control-store session
    from stacklens.cli.admin import control_session

    return control_session()


def _list(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import list_budgets

    with _session() as session:
        rows = list_budgets(session, _project(session, args.project))
    if args.json:
        print(json.dumps({"budgets": [asdict(r) for r in rows]}))
        return 0
    if not rows:
        print(f"no budgets in {args.project}")
    for row in rows:
        unit = f" {row.unit}" if row.unit else ""
        print(f"{row.id}  {row.metric:<12} {row.scope:<24} <= {row.value:g}{unit}  ({row.description})")
    return 0


def _set(args: argparse.Namespace) -> int:
    from stacklens.control.budgets import set_budget
    from stacklens.performance.budget_rules import BudgetError

    with _session() as session:
        try:
            row, created = set_budget(
                session, _project(session, args.project), args.metric, args.scope, args.value
            )
        except BudgetError as exc:
            raise CliError(str(exc)) from exc
    if args.json:
        print(json.dumps({**asdict(row), "created": created}))
    else:
        print(
            f"{'created' if created else 'changed'} budget {row.id}: {row.metric} on {row.scope} <= {row.value:g}"
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
