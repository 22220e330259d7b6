"""What a backup holds, authenticated: the list of its files and the manifest's signature, and the checks a
restore makes before it reads a byte of a backup.

**The file list.** The manifest names every file of the backup (``files``: relative name → size, and the
SHA-256 of every file outside the engine's data parts — the engine's ``warehouse/.backup`` index, which holds
each part file's checksum, the table definitions, the control store, the Dagster files, the sealed secret).
The data parts are listed by size only: hashing them would read the whole backup twice, and the raw tables'
rows are checked end to end after a restore (row counts and checksums against the manifest).

**The signature.** ``signature`` is an HMAC-SHA256 of the manifest's canonical JSON (every field but the
signature, keys sorted, no spaces) under a key derived from the installation's server secret. A plain backup
is restored with the original secret at hand (``STACKLENS_SECRET_KEY`` or ``<data_dir>/secret_key``, as its
encrypted values need anyway); a sealed one carries the secret inside, sealed with the passphrase, so a fresh
installation opens that file first and checks the signature with it. Without the secret (or the passphrase)
nobody can write a manifest a restore accepts, so a changed file list, a path or a database name put in by
hand is refused.

**The checks.** Every name is relative, made of plain components (no ``..``, no absolute path) and inside the
backup; no file or directory of the backup is a symbolic link or anything but a regular file (files are opened
with ``O_NOFOLLOW``); every listed file is there with its size and hash. Files not listed are not read.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from stacklens.operations.backup_target import BackupError

SIGNED_FORMAT = 2
_KEY_LABEL = b"stacklens backup manifest signature v1"
_DATA_PARTS = "warehouse/data/"
_HASH_CHUNK = 1024 * 1024
# The engine's index names its files in <name> (and, deduplicated, <data_file_name>) elements.
_INDEX_NAMES = re.compile(rb"<(name|data_file_name)>([^<]*)</\1>")


def _signing_key(secret: bytes) -> bytes:
    # A key of its own, derived from the secret: a manifest's MAC never equals one the secret makes elsewhere.
    return hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()


def canonical(manifest: dict[str, Any]) -> bytes:
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def signature(manifest: dict[str, Any], secret: bytes) -> str:
    return hmac.new(_signing_key(secret), canonical(manifest), hashlib.sha256).hexdigest()


def signature_holds(manifest: dict[str, Any], secret: bytes) -> bool:
    given = manifest.get("signature")
    return isinstance(given, str) and hmac.compare_digest(given, signature(manifest, secret))


def plain_name(name: object) -> PurePosixPath:
    """``name`` as a relative path of plain components; :class:`BackupError` for anything else."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name:
        raise BackupError(f"the backup names a file {name!r}: not a file name a backup holds; refused")
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in ("", ".", "..") for part in name.split("/")):
        raise BackupError(
            f"the backup names a file {name!r} outside its own directory (absolute, or with '..'); refused"
        )
    return path


def open_no_follow(path: Path) -> int:
    """A read descriptor of the regular file ``path``, never through a symbolic link (its last component)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path):
            raise BackupError(
                f"{path} is a symbolic link: a backup StackLens made holds none; refused"
            ) from None
        raise BackupError(f"cannot read {path} ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BackupError(f"{path} is not a regular file; refused")
    return fd


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with os.fdopen(open_no_follow(path), "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def inventory(root: Path, leave_out: frozenset[str]) -> dict[str, dict[str, Any]]:
    """Every regular file under ``root`` but ``leave_out`` (the manifest itself): name → size (and hash)."""
    found: dict[str, dict[str, Any]] = {}
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if relative in leave_out or not stat.S_ISREG(info.st_mode):
                continue
            entry: dict[str, Any] = {"size": info.st_size}
            if not relative.startswith(_DATA_PARTS):
                entry["sha256"] = file_hash(path)
            found[relative] = entry
    return dict(sorted(found.items()))


def check_tree(root: Path, listed: dict[str, Any] | None, leave_out: frozenset[str]) -> list[str]:
    """Refuse a backup directory holding a symbolic link or a special file anywhere, or (signed: ``listed``)
    missing a listed file or holding one of another size or hash; the names of files present but not listed
    (never read)."""
    present = set()
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise BackupError(
                    f"{path} is a symbolic link: a backup StackLens made holds none; refused (nothing was "
                    "restored)"
                )
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise BackupError(f"{path} is not a regular file or directory; refused")
            if stat.S_ISREG(mode):
                present.add(path.relative_to(root).as_posix())
    present -= leave_out
    if listed is None:
        return []
    for name, entry in listed.items():
        plain_name(name)
        if name not in present:
            raise BackupError(f"{root} lacks {name}, which its manifest lists: an incomplete backup; refused")
        path = root / name
        if not isinstance(entry, dict) or path.lstat().st_size != entry.get("size"):
            raise BackupError(
                f"{path} is not the size its manifest records: changed after the backup; refused"
            )
        if "sha256" in entry and file_hash(path) != entry["sha256"]:
            raise BackupError(
                f"{path} is not the file its manifest records: changed after the backup; refused"
            )
    return sorted(present - set(listed))


def check_engine_index(index: Path) -> None:
    """Refuse an engine index (``warehouse/.backup``) naming a file outside the backup (``..``, absolute) or
    declaring entities (it is read by the engine)."""
    with os.fdopen(open_no_follow(index), "rb") as handle:
        text = handle.read()
    if b"<!DOCTYPE" in text or b"<!ENTITY" in text:
        raise BackupError(f"{index} declares XML entities: not an index the engine wrote; refused")
    for _tag, raw in _INDEX_NAMES.findall(text):
        plain_name(html.unescape(raw.decode("utf-8", "replace")))


def copy_no_follow(source: Path, target: Path, mode: int = 0o600) -> None:
    """Copy the regular file ``source`` to ``target`` (``mode``), following no link at either end."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_no_follow(source), "rb") as src:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as dst:
            while chunk := src.read(_HASH_CHUNK):
                dst.write(chunk)
