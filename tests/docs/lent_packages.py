"""The packages a requirement needs, lent from this test run's virtual environment to a venv a test made.

The guide's install commands (tests/docs/test_getting_started.py) run as written in a fresh venv; what made
them take minutes was pip installing the server extra's ~130 distributions again (chdb, dagster, polars…)
that `make install-dev` had already installed here from the same requirements. Lending them makes pip find
each requirement satisfied, so the commands still resolve the package's requirements, build it from the
checkout and install it, without unpacking its dependencies again.

Only the requirement's own closure is lent, and by a site directory of links to exactly those
distributions' files (not this venv's whole site-packages): a module the server imports but the `server`
extra does not name stays missing in the new venv, as on a real machine. A requirement that is not installed
here, or not at a version it accepts, is not lent: pip then installs it from the index as it would anyway.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement

SITE = Path(sysconfig.get_paths()["purelib"])


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed() -> dict[str, metadata.Distribution]:
    """This venv's distributions by canonical name."""
    return {_canonical(d.metadata["Name"]): d for d in metadata.distributions(path=[str(SITE)])}


def closure(requirements: list[str]) -> set[str]:
    """Canonical names of the distributions installed here that ``requirements`` need, transitively (with
    the extras they ask for), each at a version its requirement accepts."""
    installed = _installed()
    needed: set[str] = set()
    queue = [(Requirement(text), {""}) for text in requirements]
    while queue:
        requirement, extras_of_parent = queue.pop()
        marker = requirement.marker
        if marker is not None and not any(marker.evaluate({"extra": e}) for e in extras_of_parent):
            continue
        name = _canonical(requirement.name)
        dist = installed.get(name)
        if dist is None or not requirement.specifier.contains(dist.version, prereleases=True):
            continue
        extras = {"", *requirement.extras}
        key = f"{name}[{','.join(sorted(extras))}]"
        if key in needed:
            continue
        needed.update({name, key})
        queue.extend((Requirement(text), extras) for text in dist.requires or [])
    return {name for name in needed if "[" not in name}


def _files(dist: metadata.Distribution) -> list[PurePosixPath]:
    """The distribution's files inside site-packages (scripts in bin/ are left out: pip writes its own)."""
    paths = [PurePosixPath(str(f)) for f in dist.files or []]
    return [p for p in paths if p.parts and p.parts[0] != ".."]


def build_site(requirements: list[str], into: Path) -> set[str]:
    """A directory of links to the files of ``requirements``' installed closure; the names lent.

    A path owned by lent distributions only is linked whole (a package's directory); one that others share
    (a namespace package such as ``google``) becomes a real directory holding links to the lent parts."""
    lent = closure(requirements)
    owners: dict[PurePosixPath, set[str]] = {}
    wanted: set[PurePosixPath] = set()
    for name, dist in _installed().items():
        for path in _files(dist):
            for depth in range(1, len(path.parts) + 1):
                prefix = PurePosixPath(*path.parts[:depth])
                owners.setdefault(prefix, set()).add(name)
                if name in lent:
                    wanted.add(prefix)
    into.mkdir(parents=True)
    for path in sorted(wanted, key=lambda p: len(p.parts)):
        parent_linked = any(
            owners[PurePosixPath(*path.parts[:depth])] <= lent for depth in range(1, len(path.parts))
        )
        if parent_linked:
            continue
        target = into / path
        if owners[path] <= lent:
            target.symlink_to(SITE / path)
        elif (SITE / path).is_dir():
            target.mkdir(exist_ok=True)
    return lent


def lend(requirements: list[str], venv: Path, site: Path) -> set[str]:
    """Lend ``requirements``' installed closure to ``venv`` through a ``.pth`` line naming ``site`` (built
    here); the names lent. Nothing is lent to a venv of another Python version (its compiled modules would
    not load there): pip then installs everything itself."""
    probe = [str(venv / "bin" / "python"), "-c", "import sys, sysconfig; print(sys.version_info[:2]);"]
    probe[-1] += " print(sysconfig.get_paths()['purelib'])"
    answer = subprocess.run(probe, capture_output=True, text=True, check=True, timeout=60).stdout.split("\n")
    if answer[0] != str(sys.version_info[:2]):
        return set()
    lent = build_site(requirements, site)
    (Path(answer[1]) / "stacklens_test_lent.pth").write_text(f"{site}\n")
    return lent
