"""SQL macros: an expression written once in ``warehouse_sql/macros/<name>.sql`` and used as ``${name}`` by
migrations and named queries.

A macro is expanded where it stands; its continuation lines take the indentation of the line holding the
placeholder, so a file using a macro renders to exactly the text it would have with the expression written
out. The migration runner checksums the rendered text: a migration that had the expression inline and now
uses the macro keeps the checksum recorded when it was applied. The comment lines at the top of a macro file
document it and are not part of the expression.

``${retention_days}`` and ``${on_cluster}`` are not macros: the migration runner fills them per deployment.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import warehouse_sql

MACROS_DIR = Path(warehouse_sql.__file__).parent / "macros"
# Placeholders the migration runner fills itself, after rendering (per deployment, outside the checksum).
RUNNER_PLACEHOLDERS = frozenset({"retention_days", "log_retention_days", "on_cluster"})
_PLACEHOLDER = re.compile(r"\$\{([a-z][a-z0-9_]*)\}")


class MacroError(ValueError):
    """A ``${name}`` that is neither a macro nor one of the runner's placeholders."""


@lru_cache(maxsize=1)
def macros() -> dict[str, str]:
    """Every macro's expression by name (its file's text without the leading comment lines)."""
    found = {}
    for path in sorted(MACROS_DIR.glob("*.sql")):
        lines = path.read_text().rstrip("\n").split("\n")
        while lines and lines[0].lstrip().startswith("--"):
            lines.pop(0)
        found[path.stem] = "\n".join(lines)
    return found


def render_macros(text: str, source: str = "SQL", _within: tuple[str, ...] = ()) -> str:
    """``text`` with every macro expanded (a macro may use others); ``source`` names the file in the error for an
    unknown name or a macro that uses itself."""
    if "${" not in text:
        return text
    known = macros()
    out = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip())]

        def expand(match: re.Match[str], indent: str = indent) -> str:
            name = match.group(1)
            if name in RUNNER_PLACEHOLDERS:
                return match.group(0)
            if name not in known:
                raise MacroError(f"{source}: unknown macro ${{{name}}} (macros: {', '.join(sorted(known))})")
            if name in _within:
                raise MacroError(f"{source}: macro ${{{name}}} uses itself")
            body = render_macros(known[name], f"macro {name}", (*_within, name))
            return body.replace("\n", "\n" + indent)

        out.append(_PLACEHOLDER.sub(expand, line))
    return "\n".join(out)
