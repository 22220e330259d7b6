"""The frozen building blocks: each keeps the text the released versions' fingerprints were made from."""

from __future__ import annotations

from stacklens.ingest.grouping import blocks, v1, v2

NATIVE = {"package": "/usr/lib/libcrash.so.2", "symbol": "crash_now", "instruction_addr": "0x7f3a"}
BUNDLED = {"filename": "https://cdn.test/static/app.3f9a1c2b.js?v=9#x", "function": "render", "in_app": True}


def test_two_frame_labels_one_per_behaviour() -> None:
    # v1 reads module or file; v2 also a native frame's package and symbol (never its address).
    assert (
        blocks.module_or_file_label(BUNDLED)
        == blocks.module_file_or_package_label(BUNDLED)
        == "app.js:render"
    )
    assert blocks.module_or_file_label(NATIVE) == "?:?"
    assert blocks.module_file_or_package_label(NATIVE) == "libcrash.so.2:crash_now"
    assert (
        v1.frame_label is blocks.module_or_file_label
        and v2.frame_label is blocks.module_file_or_package_label
    )


def test_the_crash_site_is_the_innermost_in_app_frame_with_its_line() -> None:
    vendor = {"module": "django.core", "function": "dispatch", "in_app": False, "context_line": "return f()"}
    ours = {"module": "shop.views", "function": "buy", "in_app": True, "context_line": "  total  = 1 / n  "}
    assert blocks.crash_site([ours, vendor], blocks.module_or_file_label) == "shop.views:buy:total = 1 / n"
    unflagged = [{"module": "a", "function": "f"}, {"module": "b", "function": "g", "in_app": False}]
    assert blocks.crash_site(unflagged, blocks.module_or_file_label) == "a:f:"
    assert blocks.crash_site([], blocks.module_or_file_label) is None


def test_the_sdk_fingerprint_expands_the_versions_own_default() -> None:
    payload = {"fingerprint": ["{{ default }}", "checkout", 3], "message": "Order 1234 failed"}
    grouping = blocks.fingerprint_with(payload, lambda p: ["message", "Order <num> failed"], "vX")
    assert grouping.components == ["fingerprint", "message", "Order <num> failed", "checkout", "3"]
    assert grouping.version == "vX" and len(grouping.hash) == 32
    assert v1.fingerprint_event(payload).components == grouping.components  # v1's default for a message
    assert v1.fingerprint_event(payload).hash == grouping.hash  # the hash is of the components alone


def test_a_kept_log_template_is_the_message() -> None:
    assert blocks.message_template({"logentry": {"message": "user %s", "formatted": "user 7"}}) == "user %s"
    assert blocks.message_template({"message": {"formatted": "plain"}}) == "plain"
    assert blocks.message_template({}) == ""
