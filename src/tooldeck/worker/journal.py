"""What a run already knows, replayed to its agent so each turn repeats nothing.

A turn of a Temporal run runs the agent again from the question. ``JournalTools``
answers the tool calls the run already made from the journal and stops the agent
(``NeedsCalls``) at the first calls it has not made; ``ReplayingClient`` answers the
model requests already made from the journal and records the new ones. The agent's
code is unchanged: the same ``RouterAgent`` or ``ModelAgent`` that runs in process.

Journal entries (JSON, kept in the workflow's history):
``{"kind": "tool", "call_id", "name", "arguments", "result", "duration_ms"}`` and
``{"kind": "model", "completion"}``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from tooldeck.agent.calls import Emit, RunTools, shown_arguments
from tooldeck.core.context import ToolContext, new_request_id
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments, ToolExecutor

__all__ = ["Journal", "JournalTools", "NeedsCalls", "ReplayingClient"]


class NeedsCalls(BaseException):
    """The agent asked for tool calls the run has not made (ends the turn).

    A ``BaseException``, so an agent's ``except Exception`` does not swallow it.
    """


def _call_key(name: str, arguments: Arguments) -> str:
    """One call's identity: its tool and its arguments in canonical JSON (or raw text)."""
    shown = shown_arguments(arguments)
    if isinstance(shown, str):
        return f"{name}\0{shown}"
    return f"{name}\0{json.dumps(shown, sort_keys=True, default=str)}"


class Journal:
    """A run's journal: its tool results and model responses, and this turn's new ones.

    Args:
        entries: The journal so far (the workflow's).
    """

    def __init__(self, entries: Sequence[dict[str, Any]]) -> None:
        self._models = [e["completion"] for e in entries if e.get("kind") == "model"]
        self._asked_before = {
            call.get("id")
            for completion in self._models
            for choice in completion.get("choices") or ()
            for call in (choice.get("message") or {}).get("tool_calls") or ()
        }
        self._tools: dict[str, list[dict[str, Any]]] = {}
        self._by_id: dict[str, dict[str, Any]] = {}
        for entry in entries:
            if entry.get("kind") == "tool":
                key = _call_key(entry["name"], entry["arguments"])
                self._tools.setdefault(key, []).append(entry)
                self._by_id[entry["call_id"]] = entry
        self._seen: Counter[str] = Counter()
        self._model_at = 0
        self.asked: list[dict[str, Any]] = []
        """Calls the agent asked for that the run has not made: ``{call_id, name, arguments}``."""
        self.new_models: list[dict[str, Any]] = []
        """Model responses received in this turn (journal entries)."""

    def tool(self, name: str, arguments: Arguments, call_id: str | None) -> dict[str, Any] | None:
        """The entry of this call: by the model's call id, else the n-th same call."""
        if call_id is not None and call_id in self._by_id:
            return self._by_id[call_id]
        key = _call_key(name, arguments)
        n = self._seen[key]
        self._seen[key] += 1
        made = self._tools.get(key, [])
        if n < len(made):
            return made[n]
        if isinstance(arguments, bytes):
            arguments = arguments.decode(errors="replace")
        self.asked.append(
            {"call_id": call_id or new_request_id(), "name": name, "arguments": arguments}
        )
        return None

    def asked_before(self, call_id: str | None) -> bool:
        """Whether a model response of an earlier turn asked for the call ``call_id``."""
        return call_id is not None and call_id in self._asked_before

    def result(self, call_id: str) -> dict[str, Any]:
        """The entry of a call made (``tool`` found it)."""
        return self._by_id[call_id]

    def next_model(self) -> dict[str, Any] | None:
        """The next model response already received, or None."""
        if self._model_at >= len(self._models):
            return None
        self._model_at += 1
        completion: dict[str, Any] = self._models[self._model_at - 1]
        return completion

    def add_model(self, completion: dict[str, Any]) -> None:
        """Record a model response received in this turn."""
        self.new_models.append({"kind": "model", "completion": completion})


class _JournalView:
    """The ``ToolExecutor`` under ``JournalTools``: answers each call from the journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        call_id = ctx.request_id if ctx is not None else None  # RunTools sets it
        return ToolResult.model_validate(self.journal.result(call_id or "")["result"])


async def _quiet(type: str, data: dict[str, Any]) -> None:
    """Events of a turn are not sent: the workflow sends those of the calls it makes."""


class JournalTools(RunTools):
    """``RunTools`` whose calls are answered from the journal; a new call ends the turn.

    Records carry the call id and duration of the call when it was made.

    Raises:
        NeedsCalls: from ``execute``, for a call the run has not made (after the calls
            started beside it in ``asyncio.gather`` have registered theirs).
    """

    def __init__(self, journal: Journal, ctx: ToolContext, emit: Emit = _quiet) -> None:
        super().__init__(_JournalView(journal), ctx, emit)
        self.journal = journal

    async def execute(
        self,
        name: str,
        arguments: Arguments = None,
        ctx: ToolContext | None = None,
        *,
        call_id: str | None = None,
        via: ToolExecutor | None = None,
        audited: bool = True,
    ) -> ToolResult:
        """The call's result from the journal, as ``RunTools.execute`` records it.

        A call ``via`` an executor of the agent's own (``search_tools``: a search of the
        view's definitions, the same on every replay) runs here, not in an activity;
        it is audited in the turn that made it, not again when later turns replay it.
        """
        if via is not None:
            audited = audited and not self.journal.asked_before(call_id)
            return await super().execute(
                name, arguments, ctx, call_id=call_id, via=via, audited=audited
            )
        entry = self.journal.tool(name, arguments, call_id)
        if entry is None:
            raise NeedsCalls(name)
        result = await super().execute(name, arguments, ctx, call_id=entry["call_id"])
        for i, record in enumerate(self.records):
            if record.id == entry["call_id"]:
                self.records[i] = record.model_copy(update={"duration_ms": entry["duration_ms"]})
        return result


class _Completions:
    def __init__(self, client: Any, journal: Journal) -> None:
        self.client = client
        self.journal = journal

    async def create(self, **request: Any) -> Any:
        from openai.types.chat import ChatCompletion

        known = self.journal.next_model()
        if known is not None:
            return ChatCompletion.model_validate(known)
        completion = await self.client.chat.completions.create(**request)
        self.journal.add_model(completion.model_dump(mode="json", exclude_unset=True))
        return completion


class ReplayingClient:
    """An ``openai.AsyncOpenAI`` stand-in for ``ModelAgent``, replaying the journal.

    ``chat.completions.create`` answers the requests already made from the journal, and
    makes and records the rest.

    Args:
        client: The real client.
        journal: The run's journal.
    """

    def __init__(self, client: Any, journal: Journal) -> None:
        self.chat = SimpleNamespace(completions=_Completions(client, journal))
