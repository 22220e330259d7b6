"""The direction of dependencies (docs/architecture.md §4, docs/decisions.md "Layout"), checked on every
module's imports.

``stacklens/`` is the domain core; ``api/``, ``dashboards/`` and ``pipelines/`` are adapters over it. An
adapter never imports another adapter; the core never imports an adapter nor a web/orchestration framework.
The one exception is the composition root, ``stacklens/cli/``, which builds the app and mounts the
dashboards and the pipelines on it. Nothing in the core, the composition root included, imports the demo
(``demo/``, ``demo_shop/``, docs/architecture.md §4): `stacklens up` starts the demo's modules as processes;
the demo may use the core (as any application of it would), never an adapter. Imports inside functions count
as much as those at the top of a module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ("api", "dashboards", "pipelines")
CORE = "stacklens"
COMPOSITION_ROOT = ("stacklens", "cli")
# What `stacklens up` runs beside the service; never imported by the core, not even by the composition root.
DEMO = ("demo", "demo_shop")
# Frameworks that belong to the adapters: the core stays importable and testable without them.
# A name matches when it is one of these or starts with it and "_" (dagster_postgres, dagster_webserver, …).
FRAMEWORKS = ("fastapi", "starlette", "jinja2", "dagster", "uvicorn", "plotly")


def _is_framework(target: str) -> bool:
    return any(target == name or target.startswith(name + "_") for name in FRAMEWORKS)


def _dynamic_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """``importlib.import_module("…")`` / ``__import__("…")`` with a literal name: an import all the same."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = (
            func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        )
        first = node.args[0]
        if (
            called in ("import_module", "__import__")
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            found.append((node.lineno, first.value))
    return found


def _modules() -> list[Path]:
    paths: list[Path] = []
    for package in (*ADAPTERS, CORE, *DEMO):
        paths += sorted((ROOT / package).rglob("*.py"))
    return paths


def _imported(tree: ast.AST, module_parts: tuple[str, ...], is_package: bool) -> list[tuple[int, str]]:
    """Every module name an ``import``/``from … import`` in ``tree`` names, with its line (relative imports
    resolved against the module's own package)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module_parts if is_package else module_parts[:-1]
                base = package[: len(package) - (node.level - 1)]
                name = ".".join((*base, node.module)) if node.module else ".".join(base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            # `from api import errors` names the adapter package itself; it is caught by the module name.
    return found


def violations_in(path: Path, root: Path = ROOT) -> list[str]:
    """The forbidden imports of one module, as ``path:line: imports name`` lines."""
    relative = path.relative_to(root)
    parts = relative.with_suffix("").parts
    is_package = parts[-1] == "__init__"
    module_parts = parts[:-1] if is_package else parts
    top = module_parts[0]
    in_composition_root = module_parts[:2] == COMPOSITION_ROOT
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems = []
    for line, name in _imported(tree, module_parts, is_package) + _dynamic_imports(tree):
        target = name.split(".")[0]
        if top == CORE and target in DEMO:
            problems.append(f"{relative}:{line}: the core imports the demo's {name}")
        elif top in DEMO and target in ADAPTERS:
            problems.append(f"{relative}:{line}: the demo imports adapter {name}")
        elif in_composition_root:
            continue
        elif top in ADAPTERS and target in ADAPTERS and target != top:
            problems.append(f"{relative}:{line}: adapter {top} imports adapter {name}")
        elif top == CORE and target in ADAPTERS:
            problems.append(f"{relative}:{line}: the core imports adapter {name}")
        elif top == CORE and _is_framework(target):
            problems.append(f"{relative}:{line}: the core imports framework {name}")
        elif top == CORE and name.startswith("stacklens.cli"):
            problems.append(f"{relative}:{line}: the core imports the composition root {name}")
    return problems


def test_every_package_is_scanned() -> None:
    paths = _modules()
    for package in (*ADAPTERS, CORE, *DEMO):
        assert any(p.relative_to(ROOT).parts[0] == package for p in paths), package
    assert len(paths) > 100


def test_dependencies_point_from_the_adapters_to_the_core() -> None:
    problems = [problem for path in _modules() for problem in violations_in(path)]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("where", "source", "expected"),
    [
        (
            "api/routers/x.py",
            "from dashboards.web import install\n",
            "adapter api imports adapter dashboards.web",
        ),
        (
            "dashboards/x.py",
            "def f():\n    import api.errors\n",
            "adapter dashboards imports adapter api.errors",
        ),
        ("pipelines/x.py", "from api import errors\n", "adapter pipelines imports adapter api"),
        (
            "stacklens/issues/x.py",
            "from pipelines.jobs import a\n",
            "the core imports adapter pipelines.jobs",
        ),
        ("stacklens/x.py", "from fastapi import FastAPI\n", "the core imports framework fastapi"),
        ("stacklens/replay/x.py", "import dagster as dg\n", "the core imports framework dagster"),
        (
            "stacklens/replay/x.py",
            "from starlette.responses import Response\n",
            "the core imports framework starlette",
        ),
        (
            "stacklens/replay/x.py",
            "from stacklens.cli.main import CliError\n",
            "the core imports the composition root",
        ),
        ("stacklens/x.py", "from demo import traffic\n", "the core imports the demo's demo"),
        ("demo/x.py", "from api.deps import AppSettings\n", "the demo imports adapter api.deps"),
        (
            "demo_shop/x.py",
            "def f():\n    import pipelines.jobs\n",
            "the demo imports adapter pipelines.jobs",
        ),
        ("demo/x.py", "from stacklens.settings import Settings\n", None),
        (
            "stacklens/cli/x.py",
            "def f():\n    import demo.driver\n",
            "the core imports the demo's demo.driver",
        ),
        (
            "stacklens/cli/x.py",
            "from demo_shop.server import main\n",
            "the core imports the demo's demo_shop",
        ),
        (
            "stacklens/cli/x.py",
            "import importlib\nm = importlib.import_module('demo.prepare')\n",
            "the core imports the demo's demo.prepare",
        ),
        ("stacklens/cli/x.py", "argv = ['python', '-m', 'demo.driver']\n", None),
        ("demo/x.py", "from stacklens.cli.launch import demo_allow\n", None),
        ("stacklens/x.py", "import dagster_postgres\n", "the core imports framework dagster_postgres"),
        ("stacklens/x.py", "def f():\n    import uvicorn\n", "the core imports framework uvicorn"),
        ("stacklens/x.py", "import plotly.graph_objects as go\n", "the core imports framework plotly"),
        (
            "stacklens/x.py",
            "import importlib\nm = importlib.import_module('dashboards.web')\n",
            "the core imports adapter dashboards.web",
        ),
        (
            "stacklens/x.py",
            "from importlib import import_module\nm = import_module('api.app')\n",
            "the core imports adapter api.app",
        ),
        ("stacklens/x.py", "import dagsterish\n", None),
        ("dashboards/routers/x.py", "from ..web import install\n", None),
        ("stacklens/cli/x.py", "from dashboards.web import install\nfrom api.app import create_app\n", None),
        ("api/x.py", "from stacklens.issues.reads import list_issues\n", None),
    ],
)
def test_the_check_finds_each_kind_of_violation(
    tmp_path: Path, where: str, source: str, expected: str | None
) -> None:
    """The rule itself can fail: planted imports are reported, allowed ones are not."""
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    problems = violations_in(path, tmp_path)
    if expected is None:
        assert problems == []
    else:
        assert len(problems) == 1 and expected in problems[0], problems


# Tests mirror the source tree: the tests of `a/b/c.py` live in `tests/a/b/test_c.py`, so a module's tests are
# found without searching and a module without any shows up here.
MIRRORED = (
    "stacklens",
    "api",
    "dashboards",
    "pipelines",
    "shipper",
    "stacklens_sdk",
    "stacklens_contract",
    "demo",
)
MIRROR_MINIMUM = 0.80


def mirror_of(module: Path) -> Path:
    """``a/b/c.py`` → ``tests/a/b/test_c.py`` (both relative to the repository root)."""
    return Path("tests", *module.parent.parts, f"test_{module.name}")


def unmirrored(root: Path = ROOT) -> tuple[list[str], int]:
    """The source modules (``__init__.py`` aside) without a mirrored test file, and how many modules there
    are."""
    modules = [
        path.relative_to(root)
        for package in MIRRORED
        if (root / package).is_dir()
        for path in sorted((root / package).rglob("*.py"))
        if path.name != "__init__.py"
    ]
    missing = [str(module) for module in modules if not (root / mirror_of(module)).is_file()]
    return missing, len(modules)


def test_tests_mirror_the_source_tree() -> None:
    missing, total = unmirrored()
    assert total > 250
    mirrored = (total - len(missing)) / total
    assert mirrored >= MIRROR_MINIMUM, (
        f"{mirrored:.1%} of {total} modules have tests/<same path>/test_<module>.py (at least "
        f"{MIRROR_MINIMUM:.0%} must); without one:\n" + "\n".join(missing)
    )


def test_the_mirror_check_sees_a_module_without_tests(tmp_path: Path) -> None:
    for path in (
        "api/routers/keys.py",
        "api/routers/__init__.py",
        "stacklens/errors.py",
        "tests/api/routers/test_keys.py",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert unmirrored(tmp_path) == (["stacklens/errors.py"], 2)
    assert mirror_of(Path("stacklens/ingest/grouping/v2.py")) == Path(
        "tests/stacklens/ingest/grouping/test_v2.py"
    )


# Modules of one topic stay small (docs/architecture.md §4: 100–300 lines; "avoid 1,000-line modules"): a
# product module
# past this many lines is split along its seams, into modules named after what they hold. No module is exempt.
PRODUCT = (*MIRRORED, "demo_shop")
MAX_MODULE_LINES = 400


def oversized(root: Path = ROOT, limit: int = MAX_MODULE_LINES) -> list[tuple[str, int]]:
    """The product modules over ``limit`` lines, with their sizes, largest first."""
    sizes = [
        (str(path.relative_to(root)), len(path.read_text(encoding="utf-8").splitlines()))
        for package in PRODUCT
        if (root / package).is_dir()
        for path in sorted((root / package).rglob("*.py"))
    ]
    return sorted(((name, lines) for name, lines in sizes if lines > limit), key=lambda s: (-s[1], s[0]))


def test_product_modules_stay_under_the_size_cap() -> None:
    assert {package for package in PRODUCT if (ROOT / package).is_dir()} == set(PRODUCT)
    over = oversized()
    assert over == [], f"modules over {MAX_MODULE_LINES} lines (split them along their seams):\n" + "\n".join(
        f"{lines:5d} {name}" for name, lines in over
    )


def test_the_size_check_sees_a_module_over_the_cap(tmp_path: Path) -> None:
    for path, lines in (("stacklens/big.py", 401), ("demo_shop/ok.py", 400), ("tests/huge.py", 900)):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n" * lines)
    assert oversized(tmp_path) == [("stacklens/big.py", 401)]
