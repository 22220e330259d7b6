"""Password rules after NIST SP 800-63B §5.1.1.2: a minimum length, no common or breached password, nothing
derived from the account's e-mail, no long runs of one character or of a sequence. No composition rules
(they push people to ``Password1!``) and no maximum below 256 characters.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

from stacklens.control.errors import AccountError

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
# "aaaaaaaa", "abababab", eight spaces: a password needs at least this many different characters.
MIN_DISTINCT_CHARACTERS = 4
_COMMON_FILE = Path(__file__).with_name("common_passwords.txt")


@lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    lines = _COMMON_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


def _is_sequence(text: str) -> bool:
    """``12345678``, ``abcdefgh``, ``87654321``: each character one step from the last, the same way."""
    steps = {ord(b) - ord(a) for a, b in pairwise(text)}
    return len(steps) == 1 and steps <= {1, -1}


def password_problem(password: object, email: str = "") -> str | None:
    """Why ``password`` cannot be used by the account ``email``, in plain words; ``None`` when it can."""
    if not isinstance(password, str):
        return "the password must be text"
    normalised = unicodedata.normalize("NFKC", password)  # SP 800-63B: count and compare normalised
    if len(normalised) < MIN_PASSWORD_LENGTH:
        return f"the password must have at least {MIN_PASSWORD_LENGTH} characters"
    if len(normalised) > MAX_PASSWORD_LENGTH:
        return f"the password must have at most {MAX_PASSWORD_LENGTH} characters"
    lowered = normalised.lower()
    if len(set(normalised)) < MIN_DISTINCT_CHARACTERS or _is_sequence(lowered):
        return "the password repeats too few characters or is a plain sequence; choose a longer, less regular one"
    if lowered in common_passwords():
        return "the password is one of the most common passwords and would be guessed at once; choose another"
    address = (email or "").strip().lower()
    local = address.partition("@")[0]
    if address and (lowered == address or (len(local) >= 3 and lowered == local)):
        return "the password must not be the account's e-mail address or its name part"
    return None


def check_password(password: object, email: str = "") -> None:
    """:class:`AccountError` with the reason when ``password`` breaks a rule."""
    problem = password_problem(password, email)
    if problem:
        raise AccountError(problem)
