"""The logs view's chart: bars per bucket stacked by severity, quietest at the bottom, no bar for no
records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboards.log_figures import volume_figure
from stacklens.logs.search import Volume, VolumeBar

SINCE = datetime(2026, 11, 20, 10, tzinfo=UTC)


def test_stacked_by_severity_in_order() -> None:
    bars = [
        VolumeBar(SINCE, "error", 2),
        VolumeBar(SINCE, "info", 40),
        VolumeBar(SINCE + timedelta(hours=2), "info", 7),
        VolumeBar(SINCE, "", 1),
    ]
    figure = volume_figure(Volume(3600, bars), SINCE, SINCE + timedelta(hours=6))
    assert [trace["name"] for trace in figure["data"]] == ["info", "error", "unspecified"]
    info = figure["data"][0]
    assert info["x"] == [SINCE.isoformat(), (SINCE + timedelta(hours=2)).isoformat()] and info["y"] == [40, 7]
    assert figure["layout"]["barmode"] == "stack"
    assert figure["layout"]["title"]["text"] == "Log records per hour, by severity"
    assert figure["layout"]["yaxis"]["tickformat"] == ",d"


def test_a_low_chart_ticks_every_record() -> None:
    figure = volume_figure(Volume(60, [VolumeBar(SINCE, "warn", 3)]), SINCE, SINCE + timedelta(hours=1))
    assert figure["layout"]["title"]["text"] == "Log records per minute, by severity"
    assert figure["layout"]["yaxis"]["dtick"] == 1
