"""What a package's modules import, read from their source: the static half of the purity tests of the code
that is installed on application hosts (the SDK, the shipper, the contract). A lazy import inside a
function is found too, which importing the package and listing ``sys.modules`` cannot see."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

STANDARD_LIBRARY = frozenset(sys.stdlib_module_names) | {"__future__"}


def top_level_imports(path: Path, *, module_level_only: bool = False) -> set[str]:
    """The top-level package names ``path`` imports (with ``module_level_only``: outside any function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_functions = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if module_level_only and id(node) in in_functions:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def imports_beyond(package: Path, allowed: set[str] | frozenset[str]) -> list[str]:
    """Every "<module> imports <name>" of ``package``'s modules naming neither the standard library nor
    ``allowed``."""
    root = package.parent
    return [
        f"{path.relative_to(root)} imports {name}"
        for path in sorted(package.rglob("*.py"))
        for name in sorted(top_level_imports(path) - STANDARD_LIBRARY - allowed)
    ]
