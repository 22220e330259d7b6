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


def test_the_attachment_quota_is_typed_in_mib_and_written_in_binary_units() -> None:
    from dashboards.quota_form import ATTACHMENT_BOX, MIB, attachment_facts

    assert current_form(None, {"attachment_bytes": 512 * MIB}).values[ATTACHMENT_BOX] == "512"
    assert current_form(None, {"attachment_bytes": MIB // 2}).values[ATTACHMENT_BOX] == "0.5"
    assert current_form(None, {}).values[ATTACHMENT_BOX] == ""  # the installation's
    limits, form = parse_form({ATTACHMENT_BOX: " 1,024 MiB "})
    assert form.errors == {} and limits[ATTACHMENT_BOX] == 1024 * MIB
    assert parse_form({ATTACHMENT_BOX: "0"})[0][ATTACHMENT_BOX] == 0  # keeps none
    assert parse_form({ATTACHMENT_BOX: ""})[0][ATTACHMENT_BOX] is None
    for bad in ("-1", "lots", "nan", "inf", "2e12", "١٢"):
        refused = parse_form({ATTACHMENT_BOX: bad})[1]
        assert refused.errors[ATTACHMENT_BOX].startswith("Attachments kept (MiB) must be a number of MiB"), (
            bad
        )
        assert refused.values[ATTACHMENT_BOX] == bad
    own = attachment_facts(256 * MIB, 1024 * MIB, 64 * MIB)
    assert (own.applied, own.installation, own.stored, own.stored_share) == (
        "256.0 MiB",
        "1.0 GiB",
        "64.0 MiB",
        "25.0 %",
    )
    none_kept = attachment_facts(0, 1024 * MIB, 0)
    assert none_kept.applied == "0 B" and none_kept.stored_share == ""
    installation = attachment_facts(None, 1024 * MIB, 1536)
    assert installation.applied == "1.0 GiB" and installation.stored == "1.5 KiB"
