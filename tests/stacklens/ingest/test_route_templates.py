"""Route normalisation: concrete URLs fold into one route."""

from __future__ import annotations

import pytest

from stacklens.ingest.route_templates import normalise_route


@pytest.mark.parametrize(
    ("url", "route"),
    [
        ("https://shop.example/orders/1234?x=1#top", "/orders/{id}"),
        ("/orders/9f1c2a7e-2b1e-4c1a-9a3e-1d2c3b4a5f60/items/7", "/orders/{uuid}/items/{id}"),
        ("/files/3f9a1c2b7d8e9f00aa/download", "/files/{hash}/download"),
        ("/invite/Zx81kQ2mN7pL4vR9sT3wYb", "/invite/{hash}"),
        ("/static/app.3f9a1c2b.js", "/static/app.{hash}.js"),
        ("/blog/hello-world/", "/blog/hello-world"),
        ("/api/v1/users", "/api/v1/users"),
        ("users/5", "/users/{id}"),
        ("", "/"),
        ("https://shop.example", "/"),
        ("/a//b", "/a/b"),
    ],
)
def test_normalise_route(url: str, route: str) -> None:
    assert normalise_route(url) == route
