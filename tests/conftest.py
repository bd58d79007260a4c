from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data dir and cwd, and no TOOLDECK_* from the outside."""
    for key in list(os.environ):
        if key.startswith("TOOLDECK_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("TOOLDECK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
