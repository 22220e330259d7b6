"""Product search and recommendations."""

from __future__ import annotations

import random
import time

from demo_shop.catalog import PRODUCTS, Product


def _score(product: Product, words: list[str], boosts: dict[str, float | None]) -> float:
    text = f"{product.name} {product.category}".lower()
    hits = sum(text.count(w) for w in words)
    # A boost configured without a value is None; multiplying by it fails for that category.
    return hits * boosts.get(product.category, 1.0)  # type: ignore[operator]


def search(query: str, rng: random.Random) -> list[Product]:
    time.sleep(rng.uniform(0.08, 0.45))  # the search index is slow
    words = [w for w in query.lower().split() if w]
    boosts: dict[str, float | None] = {
        "lenses": 1.5,
        "cameras": 1.2,
        "accessories": None if "kit" in words else 0.8,
    }
    ranked = sorted(PRODUCTS.values(), key=lambda p: _score(p, words, boosts), reverse=True)
    return ranked[:5]


def _walk(history: list[int], depth: int) -> int:
    # Recursion depth varies with the user's history; the bug is at the bottom whatever the depth.
    if depth == 0:
        return history[len(history)]  # off by one: always out of range
    return _walk(history, depth - 1)


def recommend(user_history: list[int]) -> list[Product]:
    if len(user_history) >= 3:
        _walk(user_history, len(user_history) % 5)
    return [PRODUCTS[i] for i in user_history if i in PRODUCTS][:3]
