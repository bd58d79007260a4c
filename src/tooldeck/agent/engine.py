"""``RunEngine``: what every engine of chat runs offers (the run contract, docs/contracts.md).

Two engines implement it: ``agent.runs.RunManager`` (in process, the default) and
``worker.engine.TemporalRuns`` (``[runs] engine = "temporal"``). The REST routes, the
chat CLI and the contract tests use only this interface, so the contract does not
change with the engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from tooldeck.agent.contracts import ChatRequest, ChatRun, ConfirmRequest, RunEvent

__all__ = ["RunEngine"]


class RunEngine(Protocol):
    """Starts, follows, confirms and cancels runs.

    Errors: ``RunNotFoundError`` (no such run), ``RunStateError`` (the state does not
    allow it), ``PermissionError`` (the caller may not decide the run's call),
    ``ConfigError`` (unknown profile), ``RunEngineError`` (the engine is unreachable).
    """

    async def start(self, request: ChatRequest, *, user: str | None = None) -> ChatRun:
        """Create a run (``queued``, ``run.created`` sent) and start it in the background."""
        ...

    async def get(self, run_id: str) -> ChatRun:
        """The run's current record."""
        ...

    async def recent(self, limit: int = 50, *, user: str | None = None) -> list[ChatRun]:
        """The newest runs first; ``user``: only that user's (None: everyone's)."""
        ...

    async def wait(self, run_id: str) -> ChatRun:
        """Wait until the run is final or ``waiting_input``; return its record."""
        ...

    async def confirm(
        self, run_id: str, body: ConfirmRequest, *, user: str | None, privileged: bool = False
    ) -> ChatRun:
        """Decide the pending call; returns once the run is final or waits again."""
        ...

    async def cancel(self, run_id: str, *, by: str | None = None) -> ChatRun:
        """Cancel a run that has not finished; its record, ``cancelled``."""
        ...

    def events(self, run_id: str, after: int = 0) -> AsyncIterator[RunEvent]:
        """The events with ``seq > after``, then live ones until the run ends."""
        ...

    async def aclose(self) -> None:
        """Stop what this process runs (in process: cancel live runs)."""
        ...
