"""Run a command in its own process group with a timeout and capped output (shell, git)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

__all__ = ["OutputCapture", "ProcessResult", "run_process"]


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
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None
    assert stderr is not None
    captures = [
        OutputCapture(lambda: stdout.read(1 << 16), max_output_bytes),
        OutputCapture(lambda: stderr.read(1 << 16), max_output_bytes),
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
        await OutputCapture.finish(captures)
    return ProcessResult(
        exit_code=None if timed_out else process.returncode,
        stdout=captures[0].text(),
        stderr=captures[1].text(),
        timed_out=timed_out,
        duration_ms=round((perf_counter() - start) * 1000, 3),
    )


def _kill(pid: int, posix: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if posix:
            os.killpg(pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            os.kill(pid, signal.SIGTERM)


class OutputCapture:
    """Reads a stream to EOF in a task, keeping ``limit`` bytes and counting the rest.

    Args:
        read: Returns the next chunk; ``b""`` at end of stream.
        limit: Bytes kept; what follows is counted and marked as cut in ``text()``.
    """

    def __init__(self, read: Callable[[], Awaitable[bytes]], limit: int) -> None:
        self.kept = bytearray()
        self.dropped = 0
        self.limit = limit
        self.task = asyncio.create_task(self._read(read))

    async def _read(self, read: Callable[[], Awaitable[bytes]]) -> None:
        while chunk := await read():
            room = self.limit - len(self.kept)
            self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - room)

    def text(self) -> str:
        """What was read so far, with a marker when bytes were cut."""
        text = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} more bytes cut: max_output_bytes={self.limit}]"
        return text

    @staticmethod
    async def finish(captures: Sequence[OutputCapture]) -> None:
        """Wait for EOF on each stream, 1 s at most; what was read by then is kept.

        A process left running (outside the killed group) may hold a stream open.
        """
        _, pending = await asyncio.wait([c.task for c in captures], timeout=1.0)
        for task in pending:
            task.cancel()
