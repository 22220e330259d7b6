"""The host's ``os`` and ``device`` contexts, as this machine describes itself."""

from __future__ import annotations

import os
import platform

from stacklens_sdk.host import host_contexts


def test_the_contexts_describe_this_host() -> None:
    contexts = host_contexts()
    assert set(contexts) == {"os", "device"}
    assert contexts["device"]["arch"] == platform.machine()
    expected_memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert contexts["device"]["memory_size"] == expected_memory
    os_context = contexts["os"]
    assert os_context["name"] == platform.freedesktop_os_release().get("NAME", "Linux")
    assert os_context["kernel_version"] == platform.release()
