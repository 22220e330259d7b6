"""What the docs name exists: repository paths, ``module.function`` references, SQL macros and CLI commands.

Docs drift when code moves; a reader who follows ``stacklens/x/y.py`` or runs ``stacklens foo bar`` from a
page must find it. Every backticked repository path in README.md and docs/*.md must be a file or folder of
the repository (``queries/…`` and ``macros/…`` are under ``warehouse_sql/``), a ``path.py``-less
``a/b/c.name`` must name a top-level definition of ``a/b/c.py``, every ``${macro}`` must be a macro file or
one of the migration runner's substitutions, and every ``stacklens <command> [<action>]`` must be one the
CLI's parser accepts."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from stacklens.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Top-level folders of the repository a backticked path may start with; other `a/b` words are not paths
# (`owner/repo`, asset-key prefixes such as `stacklens/days`, URL paths).
ROOTS = (
    "api",
    "bench",
    "dashboards",
    "demo",
    "demo_shop",
    "deploy",
    "docs",
    "pipelines",
    "scripts",
    "shipper",
    "stacklens",
    "stacklens_contract",
    "stacklens_sdk",
    "tests",
    "warehouse_sql",
)
UNDER_WAREHOUSE_SQL = ("queries", "macros", "migrations")
# Dagster tags and asset-key prefixes written as `stacklens/…`: names, not files.
NOT_PATHS = {"stacklens/days", "stacklens/jobs", "stacklens/schedules"}
# `${name}` placeholders the migration runner and the message templates fill (not macros).
SUBSTITUTIONS = {
    "on_cluster",
    "retention_days",
    "log_retention_days",
    "create_date",
    "message",
    "name",
    "up_revision",
}

_PATH = re.compile(r"`((?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_.\-]+)/?`")
_MACRO = re.compile(r"\$\{([a-z_]+)\}")
_COMMAND = re.compile(r"(?:^|[`\s$])stacklens ([a-z][a-z-]+)(?: ([a-z][a-z-]+))?", re.MULTILINE)


def _doc_texts() -> list[tuple[str, str]]:
    return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in DOCS]


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    """Backticked repository paths of ``text`` that do not exist under ``root``."""
    missing = []
    for raw in _PATH.findall(text):
        first = raw.split("/")[0]
        if raw in NOT_PATHS or "*" in raw:
            continue
        if first in UNDER_WAREHOUSE_SQL:
            candidate = root / "warehouse_sql" / raw
        elif first in ROOTS:
            candidate = root / raw
        else:
            continue
        if candidate.exists():
            continue
        # `stacklens/issues/actions.apply_status`: a definition in a module.
        module, _, attribute = raw.rpartition(".")
        source = root / f"{module}.py"
        if attribute and source.is_file() and attribute in _top_level_names(source):
            continue
        missing.append(raw)
    return missing


def _top_level_names(source: Path) -> set[str]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def unknown_macros(text: str, root: Path = ROOT) -> list[str]:
    macros = {path.stem for path in (root / "warehouse_sql" / "macros").glob("*.sql")}
    return [name for name in _MACRO.findall(text) if name not in macros and name not in SUBSTITUTIONS]


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def unknown_commands(text: str, parser: argparse.ArgumentParser) -> list[str]:
    commands = _choices(parser)
    unknown = []
    for command, action in _COMMAND.findall(text):
        if command not in commands:
            unknown.append(command)
            continue
        actions = _choices(commands[command])
        if actions and action and action not in actions:
            unknown.append(f"{command} {action}")
    return unknown


@pytest.mark.parametrize(("doc", "text"), _doc_texts(), ids=[p.name for p in DOCS])
def test_every_path_the_docs_name_exists(doc: str, text: str) -> None:
    assert missing_paths(text) == [], doc


@pytest.mark.parametrize(("doc", "text"), _doc_texts(), ids=[p.name for p in DOCS])
def test_every_macro_the_docs_name_exists(doc: str, text: str) -> None:
    assert unknown_macros(text) == [], doc


@pytest.mark.parametrize(("doc", "text"), _doc_texts(), ids=[p.name for p in DOCS])
def test_every_command_the_docs_name_is_one_the_cli_accepts(doc: str, text: str) -> None:
    assert unknown_commands(text, build_parser()) == [], doc


def test_the_checks_can_fail() -> None:
    planted = (
        "See `stacklens/nowhere.py`, `queries/none/x.sql`, `stacklens/errors.no_such_thing`, `owner/repo`."
    )
    assert missing_paths(planted) == [
        "stacklens/nowhere.py",
        "queries/none/x.sql",
        "stacklens/errors.no_such_thing",
    ]
    assert missing_paths("`stacklens/errors.py` and `tests/docs/`") == []
    assert unknown_macros("FROM ${pageload_window} WHERE ${no_such_macro}") == ["no_such_macro"]
    text = "Run `stacklens serve`, `stacklens pipelines ui`, `stacklens pipelines fly` and `stacklens frobnicate`."
    assert unknown_commands(text, build_parser()) == ["pipelines fly", "frobnicate"]
