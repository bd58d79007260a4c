"""Helpers for tests that start real processes and servers: ``tooldeck serve``, the
``tooldeck`` command, a project with a tool that needs confirmation, a local HTTP
server, free ports."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from deadlines import scaled

BIN = Path(sys.executable).parent
"""Where this environment's ``tooldeck`` command is (a desktop launch names it so)."""

CONFIRMED_TOOL = '''
from tooldeck import tool


@tool(requires_confirmation=True)
def delete_note(name: str) -> dict:
    """Delete a note.

    Args:
        name: The note.
    """
    return {"deleted": name}
'''
"""A ``tools.py`` whose one tool, ``delete_note``, a person must approve each call of."""


def confirming_project(folder: Path, extra: str = "") -> Path:
    """``folder`` as a project serving ``CONFIRMED_TOOL``; its ``tooldeck.toml`` + ``extra``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.py").write_text(CONFIRMED_TOOL)
    config = folder / "tooldeck.toml"
    config.write_text('tools = ["./tools.py"]\n' + extra)
    return config


def tooldeck(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run this environment's ``tooldeck`` command, its output captured as text."""
    return subprocess.run(
        [str(BIN / "tooldeck"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def interruptible() -> None:
    """A child's SIGINT as a terminal leaves it (``preexec_fn`` of a Ctrl-C test).

    A shell without job control starts a background job with SIGINT ignored, and every
    child inherits that (Python then installs no ``KeyboardInterrupt`` handler): a suite
    started with ``nohup ... &`` failed the Ctrl-C tests that pass in a terminal.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 in a thread; yields ``http://127.0.0.1:<port>``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_app(app: Any, what: str, **config: Any) -> Iterator[str]:
    """An ASGI ``app`` served by uvicorn on 127.0.0.1 in a thread, started when this yields
    ``http://127.0.0.1:<port>``; ``config``: more ``uvicorn.Config`` settings."""
    import uvicorn

    from deadlines import wait_until

    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning", **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, f"{what} to start")
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def env_for(data_dir: Path | None) -> dict[str, str]:
    """The test's environment without TOOLDECK_* settings; the data dir when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
    if data_dir is not None:
        env["TOOLDECK_DATA_DIR"] = str(data_dir)
    return env


class Server:
    """A ``tooldeck serve`` process on 127.0.0.1:``port``, healthy when constructed."""

    def __init__(
        self,
        data_dir: Path | None,
        port: int,
        extra_args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.url = f"http://127.0.0.1:{port}"
        logs = (data_dir.parent if data_dir is not None else cwd) or Path.cwd()
        self.log = (logs / f"server-{port}-{time.monotonic_ns()}.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tooldeck", "serve", "--port", str(port), *(extra_args or [])],
            env={**env_for(data_dir), **(env or {})},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
        )
        deadline = time.monotonic() + scaled(180)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                raise RuntimeError(f"server exited early: {Path(self.log.name).read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"server did not answer /healthz within {scaled(180):g} s "
            f"(TOOLDECK_TEST_TIMEOUT_SCALE multiplies it); its log:\n"
            + Path(self.log.name).read_text()[-3000:]
        )

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


EVERYTHING = Path(__file__).parents[1] / ".npm/node_modules/.bin/mcp-server-everything"
"""npm's ``@modelcontextprotocol/server-everything``, pinned (``make npm-servers``)."""


def everything_server() -> Path:
    """``EVERYTHING``; the test is skipped without it, or fails when CI requires it."""
    if not EVERYTHING.exists():
        if os.environ.get("TOOLDECK_REQUIRE_NPM") == "1":
            pytest.fail(f"{EVERYTHING} is missing: run make npm-servers")
        pytest.skip("npm's server-everything is not installed (make npm-servers)")
    return EVERYTHING
