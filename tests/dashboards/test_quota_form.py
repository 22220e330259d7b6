"""The quota form's boxes: stored limits fill them, empty means no limit, a bad box is named by its label."""

from __future__ import annotations

from dashboards.quota_form import current_form, parse_form


def test_stored_limits_fill_the_boxes() -> None:
    form = current_form(None, {"error": 50, "bogus": 3})
    assert form.values["events_per_minute"] == "" and form.values["error"] == "50"
    assert "bogus" not in form.values and form.values["replay"] == ""


def test_boxes_parse_to_limits_and_bad_ones_are_named() -> None:
    limits, form = parse_form({"events_per_minute": " 10,000 ", "log": "7"})
    assert form.errors == {}
    assert limits["events_per_minute"] == 10_000 and limits["log"] == 7 and limits["span"] is None

    _, refused = parse_form({"events_per_minute": "0", "span": "1.5", "replay": "١٢", "error": "100000001"})
    assert set(refused.errors) == {"events_per_minute", "span", "replay", "error"}
    assert refused.errors["span"].startswith("Spans per minute must be a whole number")
    assert refused.values["span"] == "1.5"
