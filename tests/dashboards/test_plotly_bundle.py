"""The dashboards' plotly.js (dashboards/static/vendor/plotly, built by deploy/plotly-bundle) holds every
trace type the figure builders make and is of the major version the installed ``plotly`` package writes
figures for; the server serves it, not the package's full bundle."""

from __future__ import annotations

import re
from pathlib import Path

import plotly

from dashboards.web import PLOTLY_JS

ROOT = Path(__file__).resolve().parents[2]
BANNER = re.compile(r"plotly\.js v(\d+)\.(\d+)\.(\d+)(?: \(([^)]*)\))?")


def _banner(path: Path) -> re.Match[str]:
    found = BANNER.search(path.read_text(encoding="utf-8")[:400])
    assert found, f"no plotly.js version in the first lines of {path}"
    return found


def test_the_bundle_is_the_packages_major_version() -> None:
    ours = _banner(PLOTLY_JS)
    package = _banner(Path(plotly.__file__).parent / "package_data" / "plotly.min.js")
    assert ours.group(1) == package.group(1), (
        f"plotly {plotly.__version__} writes figures for plotly.js {package.group(0)}, the dashboards serve "
        f"{ours.group(0)}: build deploy/plotly-bundle again (its README.md)"
    )


def test_every_trace_type_the_figures_build_is_in_the_bundle() -> None:
    built = {
        name.lower()
        for path in (ROOT / "dashboards").glob("*.py")
        for name in re.findall(r"\bgo\.([A-Z][A-Za-z]+)\(", path.read_text(encoding="utf-8"))
    } - {"figure", "layout"}
    assert {"scatter", "bar", "heatmap", "indicator"} <= built  # what the figures draw today
    registered = set(
        re.findall(
            r'require\("plotly\.js/lib/([a-z]+)"\)', (ROOT / "deploy/plotly-bundle/entry.js").read_text()
        )
    )
    in_bundle = {"scatter"} | set((_banner(PLOTLY_JS).group(4) or "").replace(" ", "").split(","))
    assert registered - {"core"} <= in_bundle, "the vendored bundle is older than entry.js: build it again"
    assert built <= in_bundle, (
        f"{sorted(built - in_bundle)} not in the bundle: add them to deploy/plotly-bundle/entry.js"
    )


def test_the_server_serves_the_bundle(client) -> None:
    answer = client.get("/static/vendor/plotly.min.js")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/javascript")
    assert answer.content == PLOTLY_JS.read_bytes()
    assert len(answer.content) < 2_000_000, "the full bundle is 4.8 MB"
