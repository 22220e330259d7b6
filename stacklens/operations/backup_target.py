"""Where a backup may be written, and what a refused or failed one leaves: nothing it did not make.

A backup goes into a **new** directory, or an **existing empty** one. It is never written into the data
directory (nor the embedded engine's directory, nor a directory holding either) — except a new directory under
``<data_dir>/backups/``, where `stacklens migrate` puts the backup it takes before rewriting data. The checks
run before anything is created, so a refusal changes nothing on disk.

A claimed target records what this run made: the directories it created (the target and any missing parents)
and the top-level names it writes inside. A backup that fails afterwards removes exactly those — never a file
that was there before, never a directory it did not create (an operator's empty directory is left, emptied of
what this run wrote, with its mode as it was).
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from stacklens.settings import Settings

# A new directory under <data_dir>/backups/ is the one place inside the data directory a backup may go
# (`stacklens migrate`'s default: <data_dir>/backups/before-migrate-<time>).
BACKUPS_FOLDER = "backups"
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


class BackupError(ValueError):
    """The backup cannot be made (or restored) as asked; the message says why and what to do."""


@dataclass
class ClaimedTarget:
    """A backup directory this run may write into, and what it made there."""

    path: Path
    created: list[Path] = field(default_factory=list)  # directories this run made, outermost first
    names: set[str] = field(default_factory=set)  # top-level entries this run writes in ``path``
    mode_before: int | None = None  # an existing empty directory's mode, given back on failure

    def entry(self, name: str) -> Path:
        """``path / name``, recorded as made by this run (and its ``.sealed`` twin, which sealing writes)."""
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"{name!r} is not a top-level name")
        self.names.update({name, name + ".sealed"})
        return self.path / name

    def discard(self) -> None:
        """Remove what this run made, and only that (a failed backup's clean-up)."""
        for name in sorted(self.names):
            _remove(self.path / name)
        for directory in reversed(self.created):
            try:
                directory.rmdir()  # only when empty: a file someone else put there meanwhile stays
            except OSError:
                break
        if self.mode_before is not None and self.path.is_dir():
            os.chmod(self.path, self.mode_before)


def _remove(path: Path) -> None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)  # a file, or a link (never followed)


def protected_directories(settings: Settings) -> list[Path]:
    """The directories a backup never writes into or removes: the data directory, and the embedded engine's
    directory when it lives elsewhere."""
    found = [settings.data_dir.resolve()]
    url = settings.resolved_warehouse_url
    if url.startswith("chdb://") and url[len("chdb://") :]:
        engine = Path(url[len("chdb://") :]).expanduser().resolve()
        if engine not in found:
            found.append(engine)
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_target(settings: Settings, target: Path) -> Path:
    """``target`` resolved, when a backup may be written there; else :class:`BackupError` saying why. Changes
    nothing."""
    resolved = target.expanduser().resolve()
    data_dir = settings.data_dir.resolve()
    for protected in protected_directories(settings):
        what = "the data directory" if protected == data_dir else "the warehouse engine's directory"
        if resolved == protected:
            raise BackupError(
                f"{resolved} is {what}: a backup goes into a new or empty directory elsewhere (or a new one "
                f"under {data_dir / BACKUPS_FOLDER})"
            )
        if _inside(protected, resolved):
            raise BackupError(
                f"{resolved} holds {what} ({protected}): a backup goes into a new or empty directory"
            )
        if _inside(resolved, protected):
            allowed = protected == data_dir and _inside(resolved.parent, data_dir / BACKUPS_FOLDER)
            if not allowed:
                raise BackupError(
                    f"{resolved} is inside {what} ({protected}): a backup goes outside it, or into a new "
                    f"directory under {data_dir / BACKUPS_FOLDER}"
                )
            if os.path.lexists(resolved):
                raise BackupError(
                    f"{resolved} already exists: inside the data directory a backup goes only into a new "
                    f"directory under {data_dir / BACKUPS_FOLDER}"
                )
    if os.path.lexists(resolved):
        if not resolved.is_dir():
            raise BackupError(f"{resolved} is not a directory: a backup goes into a new or empty directory")
        try:
            occupied = any(resolved.iterdir())
        except OSError as exc:
            raise BackupError(f"{resolved} cannot be read ({exc.strerror})") from None
        if occupied:
            raise BackupError(
                f"{resolved} is not empty: a backup goes into a new or empty directory (nothing in it was "
                "changed)"
            )
    return resolved


def claim_target(settings: Settings, target: Path) -> ClaimedTarget:
    """Check ``target`` (:func:`check_target`), then create it (0700) and any missing parent, recording what
    was made."""
    resolved = check_target(settings, target)
    claimed = ClaimedTarget(resolved)
    if resolved.is_dir():
        claimed.mode_before = stat.S_IMODE(resolved.stat().st_mode)
        os.chmod(resolved, PRIVATE_DIR)
        return claimed
    missing = []
    for directory in (resolved, *resolved.parents):
        if os.path.lexists(directory):
            break
        missing.append(directory)
    try:
        for directory in reversed(missing):
            os.mkdir(directory, PRIVATE_DIR)  # fails if someone made it meanwhile: it is not ours then
            claimed.created.append(directory)
    except OSError as exc:
        claimed.discard()
        raise BackupError(f"cannot create {resolved} ({exc.strerror})") from None
    os.chmod(resolved, PRIVATE_DIR)  # whatever the umask
    return claimed


def make_private(root: Path) -> None:
    """Every directory under ``root`` 0700 and every file 0600 (the engine writes its backup 0755/0644).
    Links are neither followed nor changed."""
    os.chmod(root, PRIVATE_DIR)
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs:
            path = os.path.join(folder, name)
            if stat.S_ISDIR(os.lstat(path).st_mode):
                os.chmod(path, PRIVATE_DIR)
        for name in files:
            path = os.path.join(folder, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.chmod(path, PRIVATE_FILE)
