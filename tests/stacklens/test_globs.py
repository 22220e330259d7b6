"""Globs matched in linear time: the same answers as fnmatch on every shape of pattern (stars, ``?``,
classes, a ``[`` with no end), a match from any of several starts taking the leftmost that fits, and the time
of a match growing with the value's length, not its square (issue 62: 8,192 characters took 1.0 s, 65,536
took 65.6 s)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from fnmatch import fnmatchcase

import pytest

from stacklens.globs import compile_glob, glob_match

PATTERNS = [
    "",
    "*",
    "**",
    "a",
    "a*",
    "*a",
    "*a*",
    "a*b",
    "a*b*c",
    "*a*b*",
    "a?c",
    "?",
    "??*",
    "[ab]c",
    "[!ab]*",
    "[a-c]*[!x-z]",
    "[]]*",
    "[!]]",
    "[z-a]",
    "[!z-a]",
    "a[",
    "*[*]*",
    "src/*/x?.py",
]
VALUES = ["", "a", "b", "c", "ab", "abc", "acb", "a[", "]", "x", "aXc", "*", "src/pay/x1.py", "aab", "abab"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_same_answers_as_fnmatch(pattern: str) -> None:
    for value in VALUES:
        assert glob_match(pattern, value) == fnmatchcase(value, pattern), (pattern, value)


def test_every_short_pattern_and_value_of_a_small_alphabet_agrees_with_fnmatch() -> None:
    patterns = ["".join(p) for n in range(5) for p in itertools.product("ab*?[]!", repeat=n)]
    values = ["".join(v) for n in range(5) for v in itertools.product("ab]!", repeat=n)]
    for pattern in patterns:
        glob = compile_glob(pattern)
        for value in values:
            assert glob.match(value) == fnmatchcase(value, pattern), (pattern, value)


def test_a_match_from_several_starts() -> None:
    glob = compile_glob("src/*.py")
    assert glob.match_from("app/src/pay.py", [0, 4])
    assert not glob.match_from("app/src/pay.py", [0])
    assert compile_glob("pay.py").match_from("app/pay.py", [0, 4])  # no star: only the start that fits
    assert not compile_glob("pay.py").match_from("app/pay.py", [0, 3])
    assert not compile_glob("a*").match_from("ba", [])


def test_a_match_after_any_slash_answers_as_a_match_from_each_of_them() -> None:
    patterns = ["".join(p) for n in range(5) for p in itertools.product("a/*?", repeat=n)]
    values = ["".join(v) for n in range(7) for v in itertools.product("a/b", repeat=n)]
    for pattern in patterns:
        glob = compile_glob(pattern)
        for value in values:
            after = [i + 1 for i, c in enumerate(value) if c == "/" and i + 1 < len(value)]
            for head in (True, False):
                starts = ([0] if head and value and value[0] != "/" else []) + after
                expected = glob.match_from(value, starts)
                assert glob.match_after_slash(value, head=head) == expected, (pattern, value, head)


def _best_of(runs: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _at_every_slash(pattern: str, value: str) -> Callable[[], object]:
    glob = compile_glob(pattern)
    return lambda: glob.match_after_slash(value)


@pytest.mark.parametrize(
    "pattern",
    ["src/checkout/*", "*a*a*a*a*b", "a?a?*/?b", "*[!a]*x", "s??/*c/*"],
)
def test_time_grows_linearly_with_the_value(pattern: str) -> None:
    short = "a/" * 4_096  # 8,192 characters, a "/" at every other one
    long = "a/" * 32_768  # 65,536
    small = _best_of(5, _at_every_slash(pattern, short))
    large = _best_of(5, _at_every_slash(pattern, long))
    # Eight times the characters: a linear match takes about eight times as long, a quadratic one 64 times.
    assert large / max(small, 1e-4) < 16, (pattern, small, large)
    assert large < 0.5, (pattern, large)
