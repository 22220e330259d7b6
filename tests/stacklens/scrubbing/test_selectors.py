"""Sentry's selector language: paths anchored at the root unless they start with a value type, `*` and `**`,
quoted keys, `&&` / `||` / `!`, and a refusal that says what is wrong."""

from __future__ import annotations

import pytest

from stacklens.scrubbing.selectors import BadSelector, Selector, done, parse_selector, step

EVENT = frozenset({"event", "object"})
OBJ = frozenset({"object"})
STR = frozenset({"string"})


def _matches(selector: Selector, path: list[tuple[str, frozenset[str]]]) -> bool:
    """Whether the selector matches the node at ``path`` (keys and types below the root)."""
    states = [atom.start() for atom in selector.atoms]
    states = [step(a, s, None, EVENT) for a, s in zip(selector.atoms, states, strict=True)]
    for key, types in path:
        states = [step(a, s, key.lower(), types) for a, s in zip(selector.atoms, states, strict=True)]
    return selector.expr.holds(tuple(done(a, s) for a, s in zip(selector.atoms, states, strict=True)))


HEADER = [("request", frozenset({"request", "http", "object"})), ("headers", OBJ), ("Authorization", STR)]
EXTRA = [("extra", OBJ), ("customer", STR)]
DEEP_EXTRA = [("extra", OBJ), ("order", OBJ), ("card", STR)]
FRAME_VAR = [
    ("exception", OBJ),
    ("values", frozenset({"array"})),
    ("0", frozenset({"exception", "error", "object"})),
    ("stacktrace", frozenset({"stacktrace", "object"})),
    ("frames", frozenset({"array"})),
    ("3", frozenset({"frame", "object"})),
    ("vars", OBJ),
]


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ("$string", EXTRA, True),
        ("$string", EXTRA[:1], False),
        ("extra.*", EXTRA, True),
        ("extra.*", DEEP_EXTRA, False),
        ("extra.**", DEEP_EXTRA, True),
        ("customer", EXTRA, False),  # anchored at the root
        ("**.customer", EXTRA, True),
        ("request.headers.authorization", HEADER, True),
        ("$http.headers", HEADER[:2], True),
        ("$http.headers.Authorization", HEADER, True),
        ("$frame.vars", FRAME_VAR, True),
        ("$error.stacktrace", FRAME_VAR[:4], True),
        ("$event", [], True),
        ("extra.'customer'", EXTRA, True),
        ("$string && !extra.customer", EXTRA, False),
        ("$string && !extra.other", EXTRA, True),
        ("extra.nope || extra.customer", EXTRA, True),
        ("!(extra.customer || $object)", EXTRA, False),
    ],
)
def test_selectors_match_as_sentry_documents(
    text: str, path: list[tuple[str, frozenset[str]]], expected: bool
) -> None:
    assert _matches(parse_selector(text), path) is expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("$strng", "unknown value type '$strng'"),
        ("extra..x", "empty segment"),
        ("extra.x &&", "ends where a path was expected"),
        ("(extra.x", "not closed"),
        ("extra.'x", "not closed"),
        ("a || && b", "unexpected '&&'"),
        ("x" * 501, "longer than 500"),
    ],
)
def test_a_bad_selector_says_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(BadSelector, match=words.replace("(", r"\(").replace("$", r"\$").replace("|", r"\|")):
        parse_selector(text)
