"""Run a command in its own process group with a timeout and capped output (shell, git)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

__all__ = ["ProcessResult", "run_process"]


@dataclass(frozen=True, kw_only=True)
class ProcessResult:
    """What a command did."""

    exit_code: int | None
    """Exit code; negative: killed by that signal; None: killed after the timeout."""
    stdout: str
    """Standard output, cut after the limit with a marker."""
    stderr: str
    """Standard error, cut the same way."""
    timed_out: bool
    """The timeout was hit and the process group was killed."""
    duration_ms: float
    """Wall time."""


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_bytes: int,
    stdin: bytes | None = None,
) -> ProcessResult:
    """Run ``argv`` and wait for it, ``timeout_s`` at most.

    Semantics:
        The command starts a new session (POSIX) so that on timeout, on cancellation
        and after it exits, its whole process group is killed: nothing it started in
        the background survives the call. Output past ``max_output_bytes`` per stream
        is counted and replaced by a marker.

    Raises:
        OSError: the program cannot be started (e.g. not installed).
    """
    start = perf_counter()
    posix = sys.platform != "win32"
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=posix,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    readers = [
        asyncio.create_task(_read_capped(process.stdout, max_output_bytes)),
        asyncio.create_task(_read_capped(process.stderr, max_output_bytes)),
    ]
    timed_out = False
    try:
        if stdin is not None and process.stdin is not None:
            process.stdin.write(stdin)
            with contextlib.suppress(ConnectionError):
                await process.stdin.drain()
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
    finally:
        _kill(process.pid, posix)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
        _, pending = await asyncio.wait(readers, timeout=1.0)
        for task in pending:
            task.cancel()
    out, err = (t.result() if t.done() and not t.cancelled() else "" for t in readers)
    return ProcessResult(
        exit_code=None if timed_out else process.returncode,
        stdout=out,
        stderr=err,
        timed_out=timed_out,
        duration_ms=round((perf_counter() - start) * 1000, 3),
    )


def _kill(pid: int, posix: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if posix:
            os.killpg(pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            os.kill(pid, signal.SIGTERM)


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> str:
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(1 << 16):
        room = limit - len(kept)
        kept += chunk[: max(room, 0)]
        dropped += max(0, len(chunk) - max(room, 0))
    text = kept.decode("utf-8", errors="replace")
    if dropped:
        text += f"\n[... {dropped} more bytes cut: output limit {limit} bytes]"
    return text
