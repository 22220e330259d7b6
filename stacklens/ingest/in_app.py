"""Which stack frames are the application's own ("in-app"), and the culprit they name.

Most SDKs leave ``in_app`` unset on most frames: sentry-python marks a frame only when its module matches
``in_app_include`` / ``in_app_exclude`` or its file is under the project root or ``site-packages``, so a
service started outside its source tree sends every frame unmarked. Sentry then infers in-app from where
the frame's code lives; so does this module, in this order:

1. the project's own rules (module prefixes, settings page): an ``include`` prefix makes a frame in-app,
   an ``exclude`` prefix vendor (include wins, as in sentry-python), whatever the SDK said;
2. the SDK's ``in_app`` when it set one;
3. vendor when the code lives in installed packages or the runtime: ``site-packages``, ``dist-packages``,
   the Python standard library (``lib/python3.X/``, ``Lib\\`` on Windows, ``<frozen …>``), ``node_modules``,
   Node's own modules (``node:…``), JVM / .NET runtime packages, a native frame's system library;
4. else in-app.

Display only: grouping versions are frozen and read ``in_app`` as the SDK sent it (``grouping/v1.py`` …),
so inference never touches the payload that is fingerprinted or stored; it gives the row's culprit and
in-app frame list and the issue page's in-app / vendor badge.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# A module prefix as people type it: dotted names (Python, JVM, .NET) or slashed paths (Go, Elixir).
PREFIX_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/@$-]{0,199}")
MAX_PREFIXES = 50

# Installed packages and Python's standard library as sysconfig lays it out: /usr/lib/python3.11/,
# ~/.pyenv/…/lib/python3.11/, lib64, a zipped library (python311.zip), C:\Python311\Lib\ on Windows (paths are
# compared with "/"). One expression: a frame is checked per event, ~30 frames an event.
_VENDOR_PATH = re.compile(
    r"/(?:site-packages|dist-packages|node_modules)/"
    r"|/lib(?:64)?/python\d+(?:\.\d+)?(?:/|\.zip/)"
    r"|/python\d*/Lib/",
    re.IGNORECASE,
)
_VENDOR_PREFIXES = ("<frozen ", "node:", "[native code]")
# Runtime packages of the JVM and .NET, for frames that carry only a module.
_RUNTIME_MODULES = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "android.",
    "androidx.",
    "dalvik.",
    "System.",
    "Microsoft.",
)
# Where native frames' system libraries live (``package`` of a native or Cocoa frame).
_SYSTEM_LIBRARIES = ("/usr/lib/", "/lib/", "/lib64/", "/system/library/", "/system/lib/", "c:/windows/")
_NATIVE_PLATFORMS = frozenset({"native", "cocoa", "objc", "c", "cpp"})
# Top-level modules of the standard library, for Python frames that carry a module and no file.
_STDLIB_MODULES = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True)
class InAppRules:
    """A project's module prefixes: ``include`` frames are in-app, ``exclude`` frames vendor."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)


NO_RULES = InAppRules()


class BadPrefix(ValueError):
    """A module prefix that cannot be one; the message names it."""


def parse_prefixes(text: str) -> tuple[str, ...]:
    """Module prefixes typed one per line or comma-separated (``shop``, ``shop.views``), checked,
    deduplicated."""
    found: list[str] = []
    for part in re.split(r"[\s,]+", text.strip()):
        if not part:
            continue
        prefix = part.rstrip(".")
        if not PREFIX_RE.fullmatch(prefix):
            raise BadPrefix(f"{part[:60]!r} is not a module prefix (like shop or shop.views)")
        if prefix not in found:
            found.append(prefix)
    if len(found) > MAX_PREFIXES:
        raise BadPrefix(f"at most {MAX_PREFIXES} prefixes per list (got {len(found)})")
    return tuple(found)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    """``shop`` covers ``shop`` and ``shop.views``, never ``shopping`` (sentry-python's rule)."""
    return any(module == p or module.startswith((p + ".", p + "/", p + "::")) for p in prefixes)


def _is_vendor_path(path: str) -> bool:
    if path.startswith(_VENDOR_PREFIXES):
        return True
    return _VENDOR_PATH.search(path.replace("\\", "/")) is not None


# An application's frames come from a few hundred files, seen again in every event: remembered, up to 4,096
# paths of at most MAX_CACHED_PATH characters (~2 MB at most, whatever senders send).
_cached_vendor_path = lru_cache(maxsize=4096)(_is_vendor_path)
MAX_CACHED_PATH = 300


def _vendor(frame: dict[str, Any], platform: str) -> bool:
    """Whether the frame's code lives in installed packages or the runtime (rule 3)."""
    has_path = False
    for key in ("abs_path", "filename"):
        path = frame.get(key)
        if type(path) is str and path:
            has_path = True
            if _cached_vendor_path(path) if len(path) <= MAX_CACHED_PATH else _is_vendor_path(path):
                return True
    module = frame.get("module")
    module = module if type(module) is str else ""
    if module.startswith(_RUNTIME_MODULES):
        return True
    frame_platform = frame.get("platform")
    frame_platform = frame_platform if type(frame_platform) is str else platform
    package = frame.get("package")
    if frame_platform in _NATIVE_PLATFORMS and type(package) is str:
        return package.replace("\\", "/").lower().startswith(_SYSTEM_LIBRARIES)
    if frame_platform == "python" and module and not has_path:
        return module.split(".", 1)[0] in _STDLIB_MODULES
    return False


def frame_in_app(frame: dict[str, Any], rules: InAppRules = NO_RULES, platform: str = "") -> bool:
    """Whether ``frame`` is the application's own code (the rules of this module, in order)."""
    if rules.include or rules.exclude:
        module = frame.get("module")
        if type(module) is str and module:
            if _under(module, rules.include):
                return True
            if _under(module, rules.exclude):
                return False
    flag = frame.get("in_app")
    if flag is True or flag is False:
        return flag
    return not _vendor(frame, platform)


def frame_place(frame: dict[str, Any]) -> str:
    """Where a frame's code is, for people: its module, else its file's base name without a bundle hash
    (``app.4f3a9c21.js`` → ``app.js``), else a native frame's library."""
    module = frame.get("module")
    if isinstance(module, str) and module:
        return module
    name = frame.get("filename") or frame.get("abs_path") or frame.get("package") or ""
    name = str(name).split("?", 1)[0].split("#", 1)[0]
    name = re.split(r"[\\/]", name)[-1]
    return re.sub(r"[.-][0-9a-f]{8,}(?=\.[A-Za-z0-9]+$)", "", name)


def culprit_of(frame: dict[str, Any], platform: str = "") -> str:
    """The culprit an issue names, from its top in-app frame: ``checkout in shop.views`` (the function, then
    where it lives); a native frame names its function alone, as its library says little."""
    function = frame.get("function") or frame.get("symbol") or "?"
    frame_platform = frame.get("platform") if isinstance(frame.get("platform"), str) else platform
    if frame_platform in _NATIVE_PLATFORMS:
        return str(function)
    place = frame_place(frame)
    return f"{function} in {place}" if place else str(function)
