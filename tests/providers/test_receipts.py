"""Receipts: a keyed call of a tool with side effects runs at most once (issue 31, part 3).

The tools here have a real effect (a line appended to a file), and the receipts live in
the runtime's real SQLite file.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.core import ToolAnnotations, ToolContext, tool
from tooldeck.runtime import Runtime, build_runtime

EFFECTS = Path("effects.txt")  # relative: each test runs in its own folder


@tool(name="send_note")
async def send_note(to: str, text: str, pause_s: float = 0.0) -> dict[str, object]:
    """Send a note (appends one line to effects.txt).

    Args:
        to: Who gets it.
        text: What it says.
        pause_s: Seconds to wait after sending.
    """
    with EFFECTS.open("a") as out:  # noqa: ASYNC230 - the effect, made where it is seen
        out.write(f"{to}:{text}\n")
    await asyncio.sleep(pause_s)
    return {"sent": len(effects())}


@tool(name="note_count", annotations=ToolAnnotations(read_only=True))
def note_count() -> int:
    """How many notes were sent."""
    return len(effects())


@tool(name="send_gated", requires_confirmation=True)
def send_gated(to: str) -> str:
    """Send a note once a person approved it.

    Args:
        to: Who gets it.
    """
    with EFFECTS.open("a") as out:
        out.write(f"{to}:gated\n")
    return "sent"


def effects() -> list[str]:
    return EFFECTS.read_text().splitlines() if EFFECTS.exists() else []


def make_runtime(**settings: object) -> Runtime:
    runtime = build_runtime(load_settings(**settings))  # type: ignore[arg-type]
    for extra in (send_note, note_count, send_gated):
        runtime.registry.register(extra)
    return runtime


def ctx(runtime: Runtime, key: str | None, **fields: object) -> ToolContext:
    return runtime.context(idempotency_key=key, **fields)


@pytest.mark.anyio
async def test_a_repeated_key_answers_the_stored_result_without_running_again() -> None:
    runtime = make_runtime()
    try:
        call = {"to": "ann", "text": "hi"}
        first = await runtime.provider.execute("send_note", call, ctx(runtime, "k-1"))
        again = await runtime.provider.execute("send_note", call, ctx(runtime, "k-1"))
        assert first.success and again.success
        assert effects() == ["ann:hi"]
        assert again.data == first.data == {"sent": 1}
        assert again.metadata.replay_of == first.metadata.request_id
        assert again.metadata.request_id != first.metadata.request_id
        assert first.metadata.replay_of is None
        assert "replay_of" not in first.model_dump()  # unchanged envelope for a first run
        # the same key with other arguments, or without a key: another call
        other = await runtime.provider.execute(
            "send_note", {"to": "bob", "text": "hi"}, ctx(runtime, "k-1")
        )
        assert other.metadata.replay_of is None
        for _ in range(2):
            await runtime.provider.execute("send_note", call, ctx(runtime, None))
        assert effects() == ["ann:hi", "bob:hi", "ann:hi", "ann:hi"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_another_users_identical_key_is_another_call_and_sees_nothing() -> None:
    runtime = make_runtime()
    try:
        call = {"to": "ann", "text": "salary"}
        mine = await runtime.provider.execute("send_note", call, ctx(runtime, "k", user="alice"))
        theirs = await runtime.provider.execute("send_note", call, ctx(runtime, "k", user="eve"))
        assert theirs.metadata.replay_of is None  # eve ran her own call
        assert mine.metadata.replay_of is None
        assert effects() == ["ann:salary", "ann:salary"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_the_tool_receives_a_key_bound_to_the_call() -> None:
    seen: list[str | None] = []

    @tool(name="charge")
    def charge(amount: int, context: ToolContext) -> str:
        """Charge an amount.

        Args:
            amount: Cents.
        """
        seen.append(context.idempotency_key)
        return "ok"

    runtime = make_runtime()
    runtime.registry.register(charge)
    try:
        for user, key, amount in [("alice", "k", 5), ("eve", "k", 5), ("alice", "k", 6)]:
            await runtime.provider.execute(
                "charge", {"amount": amount}, ctx(runtime, key, user=user)
            )
        assert all(k is not None and len(k) == 64 for k in seen)
        assert len(set(seen)) == 3  # never the caller's raw key, never shared
        await runtime.provider.execute("charge", {"amount": 5}, ctx(runtime, None))
        assert seen[-1] is None  # no key asked for: none made up
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_read_only_tools_and_unknown_names_keep_no_receipt(tmp_path: Path) -> None:
    runtime = make_runtime()
    try:
        counted = await runtime.provider.execute("note_count", {}, ctx(runtime, "r"))
        assert counted.success and counted.metadata.replay_of is None
        missing = await runtime.provider.execute("nope", {}, ctx(runtime, "r"))
        assert missing.error is not None and missing.error.type == "not_found"
    finally:
        await runtime.aclose()
    with sqlite3.connect(tmp_path / "data" / "receipts.db") as db:
        assert db.execute("SELECT count(*) FROM receipts").fetchone() == (0,)


@pytest.mark.anyio
async def test_concurrent_deliveries_of_one_key_run_once() -> None:
    runtime = make_runtime()
    try:
        call = {"to": "ann", "text": "hi", "pause_s": 0.3}
        results = await asyncio.gather(
            *(runtime.provider.execute("send_note", call, ctx(runtime, "k")) for _ in range(5))
        )
        assert effects() == ["ann:hi"]
        assert {json.dumps(r.data) for r in results} == {'{"sent": 1}'}
        assert sum(r.metadata.replay_of is None for r in results) == 1
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_caller_that_goes_away_does_not_cut_the_call() -> None:
    runtime = make_runtime()
    try:
        call = {"to": "ann", "text": "hi", "pause_s": 0.3}
        task = asyncio.create_task(runtime.provider.execute("send_note", call, ctx(runtime, "k")))
        await asyncio.sleep(0.1)
        task.cancel()  # the client's connection dropped
        with pytest.raises(asyncio.CancelledError):
            await task
        retry = await runtime.provider.execute("send_note", call, ctx(runtime, "k"))
        assert retry.success and retry.metadata.replay_of is not None
        assert effects() == ["ann:hi"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_call_that_waits_for_approval_runs_once_approved_under_the_same_key() -> None:
    runtime = make_runtime()
    try:
        asked = await runtime.provider.execute("send_gated", {"to": "ann"}, ctx(runtime, "g"))
        assert asked.error is not None and asked.error.type == "confirmation_required"
        again = await runtime.provider.execute("send_gated", {"to": "ann"}, ctx(runtime, "g"))
        assert again.error is not None and again.error.type == "confirmation_required"
        assert effects() == []
        from tooldeck.core.confirmation import ConfirmationDecision

        runtime.approvals.decide(
            asked.error.details["approval_id"],  # type: ignore[index]
            ConfirmationDecision(approved=True, approver="ann"),
        )
        ran = await runtime.provider.execute("send_gated", {"to": "ann"}, ctx(runtime, "g"))
        repeat = await runtime.provider.execute("send_gated", {"to": "ann"}, ctx(runtime, "g"))
        assert ran.success and repeat.success and repeat.metadata.replay_of is not None
        assert effects() == ["ann:gated"]  # the approval was used once; the retry replayed
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_failed_call_is_answered_as_it_failed() -> None:
    @tool(name="flaky_send")
    def flaky_send(to: str) -> str:
        """Send, then fail.

        Args:
            to: Who.
        """
        with EFFECTS.open("a") as out:
            out.write(f"{to}:flaky\n")
        raise ConnectionError("the mail server hung up")

    runtime = make_runtime()
    runtime.registry.register(flaky_send)
    try:
        first = await runtime.provider.execute("flaky_send", {"to": "a"}, ctx(runtime, "f"))
        again = await runtime.provider.execute("flaky_send", {"to": "a"}, ctx(runtime, "f"))
        assert first.error is not None and first.error.type == "execution"
        assert again.error == first.error and again.metadata.replay_of is not None
        assert effects() == ["a:flaky"]  # the effect may have happened: not repeated
        fresh = await runtime.provider.execute("flaky_send", {"to": "a"}, ctx(runtime, "f2"))
        assert fresh.metadata.replay_of is None and len(effects()) == 2  # a new key runs it
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_run_keys_its_calls_by_run_and_call_id() -> None:
    from tooldeck.agent.calls import RunTools

    async def emit(kind: str, data: dict[str, object]) -> None:
        return None

    runtime = make_runtime()
    try:
        run = RunTools(runtime.provider, runtime.context(run_id="run-1"), emit)
        call = {"to": "ann", "text": "hi"}
        first = await run.execute("send_note", call, call_id="c1")
        resumed = await run.execute("send_note", call, call_id="c1")  # a resumed run repeats c1
        second = await run.execute("send_note", call, call_id="c2")  # the model asked twice
        assert resumed.metadata.replay_of == first.metadata.request_id == "c1"
        assert second.metadata.replay_of is None
        assert effects() == ["ann:hi", "ann:hi"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_receipts_off_runs_every_delivery() -> None:
    runtime = make_runtime(receipts={"enabled": False})
    try:
        for _ in range(2):
            await runtime.provider.execute("send_note", {"to": "a", "text": "b"}, ctx(runtime, "k"))
        assert effects() == ["a:b", "a:b"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_another_process_writing_the_store_does_not_block_the_event_loop(
    tmp_path: Path,
) -> None:
    runtime = make_runtime()
    other = sqlite3.connect(tmp_path / "data" / "receipts.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        call = asyncio.create_task(
            runtime.provider.execute("send_note", {"to": "a", "text": "b"}, ctx(runtime, "k"))
        )
        ticks = 0
        for _ in range(10):  # the loop keeps running while the call waits for the lock
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 10 and not call.done() and effects() == []
        other.execute("COMMIT")
        result = await call
        assert result.success and effects() == ["a:b"]
    finally:
        other.close()
        await runtime.aclose()


def test_the_cli_call_repeated_with_its_key_prints_the_stored_result(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "tools.py").write_text(
        "from pathlib import Path\n"
        "from tooldeck import tool\n\n\n"
        "@tool\n"
        "def append_line(text: str) -> int:\n"
        '    """Append a line.\n\n    Args:\n        text: The line.\n    """\n'
        '    with Path("effects.txt").open("a") as out:\n'
        '        out.write(text + "\\n")\n'
        '    return len(Path("effects.txt").read_text().splitlines())\n'
    )
    (tmp_path / "tooldeck.toml").write_text('tools = ["./tools.py"]\n')

    def call(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tooldeck", "call", "append_line", "text=hi", *extra],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    first, again = call("--idempotency-key", "nightly-1"), call("--idempotency-key", "nightly-1")
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert json.loads(again.stdout)["metadata"]["replay_of"]
    assert json.loads(again.stdout)["data"] == json.loads(first.stdout)["data"] == 1
    refused = call("--idempotency-key", "")
    assert refused.returncode == 2 and "printable ASCII" in refused.stderr
    assert effects() == ["hi"]


@pytest.mark.anyio
async def test_a_long_call_keeps_its_lease_so_a_repeat_waits_instead_of_doubting() -> None:
    runtime = make_runtime(receipts={"lease_s": 0.3})
    try:
        call = {"to": "ann", "text": "hi", "pause_s": 1.0}
        first = asyncio.create_task(runtime.provider.execute("send_note", call, ctx(runtime, "k")))
        await asyncio.sleep(0.6)  # twice the lease: only its extensions keep it alive
        repeat = await runtime.provider.execute("send_note", call, ctx(runtime, "k"))
        assert repeat.success and repeat.metadata.replay_of is not None, repeat.error
        assert (await first).success and effects() == ["ann:hi"]
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_a_stored_result_that_cannot_be_read_is_said_and_not_run_again(
    tmp_path: Path,
) -> None:
    runtime = make_runtime()
    try:
        call = {"to": "ann", "text": "hi"}
        await runtime.provider.execute("send_note", call, ctx(runtime, "k"))
        with sqlite3.connect(tmp_path / "data" / "receipts.db") as db:
            db.execute('UPDATE receipts SET result = \'{"status": "later", "new": 1}\'')
        again = await runtime.provider.execute("send_note", call, ctx(runtime, "k"))
        assert again.error is not None and again.error.type == "execution"
        assert "its stored result cannot be read" in again.error.message
        assert effects() == ["ann:hi"]
    finally:
        await runtime.aclose()
