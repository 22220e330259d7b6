"""Slugs: the lowercase ASCII names organizations and projects are addressed by in URLs and commands.

A slug is unique among its kind across the installation (``web-app``, ``web-app-2``, …), so an address names
one organization or one project whichever organization asks.
"""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Organization, Project


def slugify(name: str) -> str:
    """``name`` as a slug: accents dropped, runs of anything but ``a-z0-9`` one ``-``, at most 48
    characters."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:48] or "x"


def unique_slug(session: Session, model: type[Organization] | type[Project], name: str) -> str:
    """A slug for ``name`` not yet used by any row of ``model`` (``name``, ``name-2``, …)."""
    base = slugify(name)
    taken = set(session.scalars(select(model.slug).where(model.slug.like(f"{base}%"))))
    n, slug = 2, base
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug
