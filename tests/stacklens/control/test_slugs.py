from __future__ import annotations

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, Project
from stacklens.control.projects import create_project
from stacklens.control.slugs import slugify, unique_slug
from stacklens.settings import Settings


def test_slugify_keeps_lowercase_ascii_words() -> None:
    assert slugify("Café Déjà Vu!") == "cafe-deja-vu"
    assert slugify("  --Web__App-- ") == "web-app"
    assert slugify("日本") == "x"  # nothing left to address it by
    assert len(slugify("a" * 100)) == 48


def test_unique_slug_counts_up_within_its_kind(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Shop", "a@b.co", "password-1")
        create_project(session, org.id, "Shop")
        create_project(session, org.id, "Shop")
        assert unique_slug(session, Project, "Shop") == "shop-3"
        # Organizations and projects are counted apart: one organization named "Shop" so far.
        assert unique_slug(session, Organization, "Shop") == "shop-2"
        assert unique_slug(session, Project, "Shopping") == "shopping"
