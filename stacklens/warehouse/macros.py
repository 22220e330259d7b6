"""SQL macros: an expression written once in ``warehouse_sql/macros/<name>.sql`` and used as ``${name}`` by
migrations and named queries.

A macro is expanded where it stands; its continuation lines take the indentation of the line holding the
placeholder, so a file using a macro renders to exactly the text it would have with the expression written
out. The migration runner checksums the rendered text: a migration that had the expression inline and now
uses the macro keeps the checksum recorded when it was applied. The comment lines at the top of a macro file
document it and are not part of the expression.

A macro may take arguments, ``${name(grain=minute)}``: each ``${grain}`` in its expression becomes ``minute``. An
argument's value is one word of the SQL file that uses the macro (``[A-Za-z0-9_]``), never a value from input, so
one expression can serve what differs only in a grain's name (the minute and hour periods of a kind).

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
# `${name}` or `${name(key=value, …)}`; an argument's value is one word.
_PLACEHOLDER = re.compile(r"\$\{([a-z][a-z0-9_]*)(?:\(([^)]*)\))?\}")
_ARGUMENT = re.compile(r"\s*([a-z][a-z0-9_]*)\s*=\s*([A-Za-z0-9_]+)\s*")


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


def render_macros(
    text: str, source: str = "SQL", _within: tuple[str, ...] = (), _arguments: dict[str, str] | None = None
) -> str:
    """``text`` with every macro expanded (a macro may use others); ``source`` names the file in the error for an
    unknown name, a macro that uses itself, or an argument that is malformed or that the macro does not use."""
    if "${" not in text:
        return text
    known = macros()
    bound = _arguments or {}
    out = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip())]

        def expand(match: re.Match[str], indent: str = indent) -> str:
            name, argument_text = match.group(1), match.group(2)
            if argument_text is None and name in bound:
                return bound[name]
            if name in RUNNER_PLACEHOLDERS:
                return match.group(0)
            if name not in known:
                raise MacroError(f"{source}: unknown macro ${{{name}}} (macros: {', '.join(sorted(known))})")
            if name in _within:
                raise MacroError(f"{source}: macro ${{{name}}} uses itself")
            arguments = _parse_arguments(argument_text, name, source)
            unused = [key for key in arguments if f"${{{key}}}" not in known[name]]
            if unused:
                raise MacroError(f"{source}: macro ${{{name}}} takes no argument {', '.join(unused)}")
            body = render_macros(known[name], f"macro {name}", (*_within, name), arguments)
            return body.replace("\n", "\n" + indent)

        out.append(_PLACEHOLDER.sub(expand, line))
    return "\n".join(out)


def _parse_arguments(text: str | None, name: str, source: str) -> dict[str, str]:
    """The ``key=value`` pairs of ``${name(key=value, …)}`` (none without parentheses)."""
    if text is None:
        return {}
    arguments = {}
    for part in text.split(","):
        match = _ARGUMENT.fullmatch(part)
        if match is None:
            raise MacroError(f"{source}: macro ${{{name}}} has a malformed argument {part.strip()!r}")
        arguments[match.group(1)] = match.group(2)
    return arguments
