"""Sentry's selector language (the subset docs/scrubbing.md lists): which fields of a payload a rule covers.

A selector is a path of segments joined by ``.``: a key (``extra``, ``Authorization``, ``'my key'`` quoted),
``*`` (any one key or list index), ``**`` (any number of them, none included) or a value type (``$string``,
``$number``, ``$boolean``, ``$object``, ``$array``, ``$null``, ``$event``, ``$exception`` / ``$error``,
``$stacktrace``, ``$frame``, ``$thread``, ``$request`` / ``$http``, ``$user``, ``$logentry``, ``$message``,
``$breadcrumb``, ``$span``, ``$sdk``). A path is anchored at the payload's root unless it starts with a value
type (``$frame.vars`` covers the variables of every frame, however deep). Paths combine with ``&&``, ``||``,
``!`` and parentheses. Keys compare case-insensitively, as header names do.

Matching runs as the payload is walked: each atom (one path) is a small automaton whose state, a set of
positions in its path, steps once per key descended (:func:`step`). The steps are pure functions of the state,
the key and the node's types, so :mod:`.apply` remembers them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stacklens.errors import InvalidInput

# Value types a `$name` segment may name, and the aliases Sentry's documentation uses.
VALUE_TYPES = frozenset(
    {
        "string",
        "number",
        "boolean",
        "object",
        "array",
        "null",
        "event",
        "exception",
        "error",
        "stacktrace",
        "frame",
        "thread",
        "request",
        "http",
        "user",
        "logentry",
        "message",
        "breadcrumb",
        "span",
        "sdk",
    }
)
# Value types of the event's own structure (the rest are JSON's): none is found inside a plain object.
SCHEMA_TYPES = VALUE_TYPES - {"string", "number", "boolean", "object", "array", "null"}
MAX_SELECTOR = 500
MAX_ATOMS = 16

KEY, ANY, DEEP, TYPE = "key", "*", "**", "$"


class BadSelector(InvalidInput):
    """A selector that cannot be read; the message says where."""


@dataclass(frozen=True)
class Segment:
    kind: str  # KEY, ANY, DEEP or TYPE
    value: str = ""  # the key (lower-cased) or the value type's name


@dataclass(frozen=True)
class Atom:
    """One path: its segments, with ``**`` put first when it starts with a value type (unanchored)."""

    segments: tuple[Segment, ...]

    def start(self) -> frozenset[int]:
        return closure(self.segments, {0})

    def viable(self, state: frozenset[int], below: frozenset[str]) -> bool:
        """Whether the atom may still match under a node below which only the schema types ``below`` occur
        (``$frame`` and ``$http`` are not found inside ``extra`` or a breadcrumb,
        :mod:`stacklens.scrubbing.apply`): some position whose next schema type, if any, is among them."""
        for i in state:
            pending = next(
                (seg.value for seg in self.segments[i:] if seg.kind == TYPE and seg.value in SCHEMA_TYPES),
                None,
            )
            if pending is None or pending in below:
                return True
        return False


@dataclass(frozen=True)
class Expr:
    """A boolean combination of atoms: ``op`` is ``atom`` (``index`` into the selector's atoms), ``not``,
    ``and`` or ``or``."""

    op: str
    index: int = -1
    parts: tuple[Expr, ...] = ()

    def holds(self, matched: tuple[bool, ...]) -> bool:
        if self.op == "atom":
            return matched[self.index]
        if self.op == "not":
            return not self.parts[0].holds(matched)
        if self.op == "and":
            return all(p.holds(matched) for p in self.parts)
        return any(p.holds(matched) for p in self.parts)

    def possible(self, alive: tuple[bool, ...]) -> bool:
        """Whether the expression may still hold below a node where ``alive`` says which atoms can still
        match (a negation always may: what it excludes may end)."""
        if self.op == "atom":
            return alive[self.index]
        if self.op == "not":
            return True
        if self.op == "and":
            return all(p.possible(alive) for p in self.parts)
        return any(p.possible(alive) for p in self.parts)


@dataclass(frozen=True)
class Selector:
    text: str
    atoms: tuple[Atom, ...]
    expr: Expr


def closure(segments: tuple[Segment, ...], positions: set[int] | frozenset[int]) -> frozenset[int]:
    """The positions reached without consuming a key: past every ``**`` (which may match nothing)."""
    out = set(positions)
    todo = list(positions)
    while todo:
        i = todo.pop()
        if i < len(segments) and segments[i].kind == DEEP and i + 1 not in out:
            out.add(i + 1)
            todo.append(i + 1)
    return frozenset(out)


def step(atom: Atom, state: frozenset[int], key: str | None, types: frozenset[str]) -> frozenset[int]:
    """The atom's state after descending to a node under ``key`` (lower-cased; ``None`` for the root) whose
    value types are ``types``. The root consumes only a value type; keys start matching below it."""
    segments = atom.segments
    out: set[int] = set(state) if key is None else set()
    for i in state:
        if i >= len(segments):
            continue
        seg = segments[i]
        if seg.kind == DEEP:
            if key is not None:
                out.add(i)
        elif seg.kind == TYPE:
            if seg.value in types:
                out.add(i + 1)
        elif key is not None and (seg.kind == ANY or seg.value == key):
            out.add(i + 1)
    return closure(segments, out)


def done(atom: Atom, state: frozenset[int]) -> bool:
    return len(atom.segments) in state


# Tokens: operators, parentheses, quoted keys, and the plain text between them (paths).
_TOKEN = re.compile(r"\s*(?:(&&|\|\||!|\(|\))|('(?:[^'\\]|\\.)*')|([^\s&|!()']+))")
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_\-:@#/\[\]]+$")


def parse_selector(text: str) -> Selector:
    """Read a selector; :class:`BadSelector` says what is wrong with it."""
    if not isinstance(text, str) or not text.strip():
        raise BadSelector("the selector is empty (try $string, extra.*, or request.headers.Authorization)")
    if len(text) > MAX_SELECTOR:
        raise BadSelector(f"the selector is longer than {MAX_SELECTOR} characters")
    parser = _Parser(_tokens(text))
    expr = parser.expression()
    if parser.pos != len(parser.tokens):
        raise BadSelector(f"unexpected {parser.tokens[parser.pos]!r} in the selector")
    return Selector(text.strip(), tuple(parser.atoms), expr)


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None or found.end() == pos:
            if text[pos] == "'":
                raise BadSelector(f"a quote of the selector is not closed: {text[pos : pos + 20]!r}")
            raise BadSelector(f"cannot read the selector from {text[pos : pos + 20]!r}")
        token = found.group(1) or found.group(2) or found.group(3)
        # A quoted key glued to the path around it (extra.'my key'.x) is one path token.
        if tokens and token not in ("&&", "||", "!", "(", ")") and _joins(tokens[-1], token):
            tokens[-1] += token
        else:
            tokens.append(token)
        pos = found.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


def _joins(previous: str, token: str) -> bool:
    if previous in ("&&", "||", "!", "(", ")"):
        return False
    return previous.endswith(".") or token.startswith(".")


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.atoms: list[Atom] = []

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expression(self) -> Expr:
        parts = [self._conjunction()]
        while self._peek() == "||":
            self.pos += 1
            parts.append(self._conjunction())
        return parts[0] if len(parts) == 1 else Expr("or", parts=tuple(parts))

    def _conjunction(self) -> Expr:
        parts = [self._unary()]
        while self._peek() == "&&":
            self.pos += 1
            parts.append(self._unary())
        return parts[0] if len(parts) == 1 else Expr("and", parts=tuple(parts))

    def _unary(self) -> Expr:
        token = self._peek()
        if token is None:
            raise BadSelector("the selector ends where a path was expected")
        if token == "!":
            self.pos += 1
            return Expr("not", parts=(self._unary(),))
        if token == "(":
            self.pos += 1
            inner = self.expression()
            if self._peek() != ")":
                raise BadSelector("a '(' of the selector is not closed")
            self.pos += 1
            return inner
        if token in ("&&", "||", ")"):
            raise BadSelector(f"unexpected {token!r} where a path was expected")
        self.pos += 1
        if len(self.atoms) >= MAX_ATOMS:
            raise BadSelector(f"the selector has more than {MAX_ATOMS} paths")
        self.atoms.append(_path(token))
        return Expr("atom", index=len(self.atoms) - 1)


def _path(token: str) -> Atom:
    segments: list[Segment] = []
    for part in _split_path(token):
        if part == "":
            raise BadSelector(f"the path {token!r} has an empty segment")
        if part == "**":
            segments.append(Segment(DEEP))
        elif part == "*":
            segments.append(Segment(ANY))
        elif part.startswith("$"):
            name = part[1:].lower()
            if name not in VALUE_TYPES:
                raise BadSelector(
                    f"unknown value type {part!r} (known: $" + ", $".join(sorted(VALUE_TYPES)) + ")"
                )
            segments.append(Segment(TYPE, name))
        elif part.startswith("'"):
            segments.append(Segment(KEY, part[1:-1].replace("\\'", "'").replace("\\\\", "\\").lower()))
        elif _PLAIN_KEY.match(part):
            segments.append(Segment(KEY, part.lower()))
        else:
            raise BadSelector(
                f"{part!r} is not a key, '*', '**' or a $type (quote keys with other characters)"
            )
    if segments[0].kind == TYPE:
        segments.insert(0, Segment(DEEP))  # a path starting with a value type matches at any depth
    return Atom(tuple(segments))


def _split_path(token: str) -> list[str]:
    """``a.'b.c'.d`` → ``["a", "'b.c'", "d"]``."""
    parts: list[str] = []
    current = ""
    quoted = False
    i = 0
    while i < len(token):
        char = token[i]
        if quoted and char == "\\" and i + 1 < len(token):
            current += token[i : i + 2]
            i += 2
            continue
        if char == "'":
            quoted = not quoted
            current += char
        elif char == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    if quoted:
        raise BadSelector(f"a quote of {token!r} is not closed")
    parts.append(current)
    return parts
