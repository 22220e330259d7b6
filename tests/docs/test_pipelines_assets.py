"""docs/pipelines.md lists exactly the assets of the Dagster graph: every asset (raw tables aside) has its
entry (`### \\`key\\` — …` or `- \\`key\\` — …`), and every entry is an asset, so the page cannot keep a
mart the graph no longer has or miss one it gained; each performance step's table names its assets."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.assets.performance import STACKS
from pipelines.definitions import defs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "pipelines.md"
ENTRY = re.compile(r"^(?:### |- )`([a-z_]+)` —", re.MULTILINE)


def test_the_asset_list_is_the_graphs() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assets = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    documented = set(ENTRY.findall(text))
    assert documented == {a for a in assets if not a.startswith("raw/")}, (
        "docs/pipelines.md lists assets the graph lacks or misses assets it has",
        documented ^ {a for a in assets if not a.startswith("raw/")},
    )


def test_each_performance_step_is_listed_with_its_tables() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for stack in STACKS:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{stack.name}` |"))
        assert [f"`{t.name}`" in row for t in stack.tables] == [True] * len(stack.tables), row
