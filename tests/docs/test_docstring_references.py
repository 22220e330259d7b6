"""What docstrings name exists: every ``:mod:`` reference, and every fully qualified ``:func:`` /
``:class:`` / ``:data:`` reference, resolves to a module of the project (and a top-level name in it).

A docstring that points to a module which moved sends a reader nowhere; this finds it from the source text
alone (no import), so it costs a parse of each file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("stacklens", "api", "dashboards", "pipelines", "shipper", "stacklens_sdk", "stacklens_contract")
ROLE = re.compile(r":(mod|func|class|data|meth|attr|exc):`~?([A-Za-z_.][\w.]*)`")


def _module_file(dotted: str) -> Path | None:
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _top_level_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _absolute(reference: str, package: str) -> str:
    if not reference.startswith("."):
        return reference
    dots = len(reference) - len(reference.lstrip("."))
    base = package.split(".")
    if dots > 1:
        base = base[: -(dots - 1)]
    return ".".join([*base, reference.lstrip(".")])


def unresolved(path: Path) -> list[str]:
    """The references in ``path``'s docstrings that name no module (or no top-level name of one)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.removesuffix(".__init__") if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)]
    missing = []
    for node in nodes:
        for role, reference in ROLE.findall(ast.get_docstring(node) or ""):
            full = _absolute(reference, package)
            if full.split(".")[0] not in PACKAGES:
                continue  # another library's name, or a local one (`:func:`helper``)
            if role == "mod":
                if _module_file(full) is None:
                    missing.append(f":{role}:`{reference}`")
                continue
            parts = full.split(".")
            # The longest prefix that is a module; the next part must be a top-level name of it.
            for cut in range(len(parts) - 1, 0, -1):
                found = _module_file(".".join(parts[:cut]))
                if found is not None:
                    if parts[cut] not in _top_level_names(found):
                        missing.append(f":{role}:`{reference}`")
                    break
            else:
                missing.append(f":{role}:`{reference}`")
    return missing


def test_every_module_a_docstring_names_exists() -> None:
    problems = {
        str(path.relative_to(ROOT)): found
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (found := unresolved(path))
    }
    assert problems == {}


def test_the_check_can_fail() -> None:
    probe = ROOT / "stacklens" / "performance" / "__init__.py"
    text = probe.read_text()
    assert ":mod:`stacklens.view_filters`" in text  # the reference fixed when `.filters` had moved
    assert _module_file(_absolute(".filters", "stacklens.performance")) is None
    assert _module_file(_absolute("..view_filters", "stacklens.performance")) is not None
    assert "parse_floor" in _top_level_names(ROOT / "stacklens" / "disk_floor_setting.py")
    assert "no_such_name" not in _top_level_names(ROOT / "stacklens" / "disk_floor_setting.py")
