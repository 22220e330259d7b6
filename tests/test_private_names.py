"""No module imports another module's private names (``from x import _name``): a name with a leading
underscore is its module's own business, free to change without a look elsewhere. A name another module
needs is public — renamed to say what it is — or the two modules are one topic and belong together."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "stacklens",
    "api",
    "dashboards",
    "pipelines",
    "shipper",
    "stacklens_sdk",
    "stacklens_contract",
    "demo",
    "demo_shop",
)


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``module: name`` for each private name ``path`` imports from a module of the project."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if node.module.split(".")[0] not in PACKAGES:
            continue  # another library's private names are that library's affair (and rare)
        found += [
            f"{node.module}: {alias.name}"
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__")
        ]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    problems = {
        str(path.relative_to(ROOT)): found
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (found := private_imports(path))
    }
    assert problems == {}


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from stacklens.ingest.landing import _hidden, visible\nfrom os import _exit\nfrom . import _sibling\n"
    )
    assert private_imports(planted, tmp_path) == ["stacklens.ingest.landing: _hidden"]
