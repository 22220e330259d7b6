"""A small shop front-end minified by the real esbuild from npm, with its source map, for the source-map
tests; optionally given debug ids by the real ``sentry-cli sourcemaps inject``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.stacklens_sdk.helpers import BROWSER_DIR

CLIENTS_DIR = Path(__file__).resolve().parents[2] / "api" / "sentry_clients"

# The original lines the tests look for on the issue page: the throw is on line 6 of cart.js.
CART_JS = """export function computeTotal(items) {
  let total = 0;
  for (const item of items) {
    const quantity = item.qty;
    if (quantity < 0) {
      throw new RangeError("quantity must be positive");
    }
    total += quantity * item.price;
  }
  return total;
}
"""
MAIN_JS = """import { computeTotal } from "./cart.js";

function checkoutButtonClicked() {
  const basket = [{ qty: 2, price: 5 }, { qty: -1, price: 3 }];
  return computeTotal(basket);
}

window.checkoutButtonClicked = checkoutButtonClicked;
"""
THROW_LINE = 6


def npm_ci(directory: Path, marker: str) -> None:
    npm = shutil.which("npm")
    assert npm, "npm is required (Node 20 + npm)"
    if not (directory / "node_modules" / marker).exists():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=directory,
            check=True,
            capture_output=True,
            timeout=600,
        )


def sentry_cli() -> Path:
    """The real sentry-cli binary from @sentry/cli (installed from the npm registry on first use)."""
    npm_ci(CLIENTS_DIR, "@sentry/cli")
    return CLIENTS_DIR / "node_modules" / ".bin" / "sentry-cli"


def build_app(
    out: Path, *, inject: bool = False, name: str = "app", minify: tuple[str, ...] = ("--minify",)
) -> Path:
    """``out/src/{main,cart}.js`` bundled and minified into ``out/dist/<name>.min.js`` with its map; with
    ``inject`` sentry-cli adds debug ids to both; ``minify`` are esbuild's minification options (another
    set gives another build of the same source). Returns the dist folder."""
    npm_ci(BROWSER_DIR, "esbuild")
    src, dist = out / "src", out / "dist"
    src.mkdir(parents=True, exist_ok=True)
    (src / "cart.js").write_text(CART_JS)
    (src / "main.js").write_text(MAIN_JS)
    esbuild = BROWSER_DIR / "node_modules" / ".bin" / "esbuild"
    subprocess.run(
        [
            str(esbuild),
            str(src / "main.js"),
            "--bundle",
            *minify,
            "--sourcemap",
            "--format=iife",
            f"--outfile={dist / (name + '.min.js')}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    if inject:
        subprocess.run(
            [str(sentry_cli()), "sourcemaps", "inject", str(dist)],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return dist
