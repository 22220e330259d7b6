"""A backup sealed with a passphrase: every file encrypted (AES-256-GCM in 1 MiB chunks, key from scrypt).

Format of a sealed file (``<name>.sealed``): ``SLBK1`` · 16-byte salt · chunks of ``[4-byte length][12-byte
nonce][ciphertext + tag]``. Each chunk's associated data is its index and a last-chunk flag, so chunks cannot
be reordered, dropped or the file cut short without the open failing. The key's salt is drawn once per backup
(every file of it carries the same salt, so the key is derived once — scrypt on each of a warehouse backup's
thousands of files would cost minutes); every chunk has a random 96-bit nonce.

The warehouse's ``.backup`` index is left readable: it lists file names, sizes and checksums (no event data),
and the engine reads it from a base backup when it makes an incremental one.
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Iterator
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"SLBK1"
SUFFIX = ".sealed"
CHUNK = 1024 * 1024
# scrypt at n=2^15, r=8 costs ~32 MiB and ~0.1 s per file: a guessed passphrase costs the same.
_SCRYPT_N = 2**15
KEEP_PLAIN = frozenset({".backup", "manifest.json"})


class SealError(ValueError):
    """A sealed file cannot be opened: wrong passphrase, or the file was changed or cut short."""


@functools.lru_cache(maxsize=4)
def _key(passphrase: str, salt: bytes) -> bytes:
    return Scrypt(salt=salt, length=32, n=_SCRYPT_N, r=8, p=1).derive(passphrase.encode())


def _aad(index: int, last: bool) -> bytes:
    return struct.pack(">QB", index, 1 if last else 0)


def seal_file(path: Path, passphrase: str, salt: bytes | None = None) -> Path:
    """Encrypt ``path`` into ``path.sealed`` and remove the plain file; the sealed file's path."""
    salt = salt or os.urandom(16)
    cipher = AESGCM(_key(passphrase, salt))
    target = path.with_name(path.name + SUFFIX)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with path.open("rb") as source, os.fdopen(fd, "wb") as out:
        out.write(MAGIC + salt)
        index = 0
        chunk = source.read(CHUNK)
        while True:
            following = source.read(CHUNK)
            last = not following
            nonce = os.urandom(12)
            sealed = cipher.encrypt(nonce, chunk, _aad(index, last))
            out.write(struct.pack(">I", len(sealed)) + nonce + sealed)
            if last:
                break
            chunk, index = following, index + 1
    path.unlink()
    return target


def _chunks(path: Path, passphrase: str) -> Iterator[bytes]:
    with path.open("rb") as source:
        head = source.read(len(MAGIC) + 16)
        if not head.startswith(MAGIC) or len(head) != len(MAGIC) + 16:
            raise SealError(f"{path.name} is not a sealed backup file")
        cipher = AESGCM(_key(passphrase, head[len(MAGIC) :]))
        index = 0
        while True:
            size_bytes = source.read(4)
            if len(size_bytes) != 4:
                raise SealError(f"{path.name} is cut short")
            (size,) = struct.unpack(">I", size_bytes)
            nonce, body = source.read(12), source.read(size)
            if len(body) != size:
                raise SealError(f"{path.name} is cut short")
            last = not source.peek(1)
            try:
                yield cipher.decrypt(nonce, body, _aad(index, last))
            except InvalidTag:
                raise SealError(
                    f"cannot open {path.name}: wrong passphrase, or the file was changed"
                ) from None
            if last:
                return
            index += 1


def open_file(path: Path, passphrase: str, target: Path) -> None:
    """Decrypt the sealed ``path`` into ``target`` (0600)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        for chunk in _chunks(path, passphrase):
            out.write(chunk)


def seal_tree(root: Path, passphrase: str) -> int:
    """Seal every file under ``root`` except the readable index files; how many were sealed."""
    count, salt = 0, os.urandom(16)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name in KEEP_PLAIN or path.name.endswith(SUFFIX):
            continue
        seal_file(path, passphrase, salt)
        count += 1
    return count


def open_tree(root: Path, passphrase: str, target: Path, names: list[str] | None = None) -> None:
    """Copy ``root`` to ``target`` with every sealed file opened (the plain ones copied as they are): the
    files ``names`` lists (relative, checked by the caller against the signed manifest), else every file."""
    import shutil

    listed = [root / name for name in names] if names is not None else None
    for path in listed if listed is not None else sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        if path.name.endswith(SUFFIX):
            open_file(path, passphrase, target / relative.with_name(relative.name[: -len(SUFFIX)]))
        else:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / relative)
