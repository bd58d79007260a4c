"""A profile's agent as another profile's tool (issue 32, part 8), against a scripted
OpenAI-compatible model: the child run has its own view, the parent gets its answer
and citations, the parent's events name the child, and a child cannot delegate again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from scripted_openai import ScriptedModel, text, tool_calls

from tooldeck.agent.contracts import FINAL_STATES, ChatRequest, ConfirmRequest
from tooldeck.config import load_settings
from tooldeck.exceptions import ConfigError
from tooldeck.runtime import Runtime, build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

PROFILES = {
    "desk": {"tools": ["get_positions"], "delegates": ["research"]},
    "research": {"tools": ["get_quotes"], "delegates": ["desk"]},
}


def names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def delegating_runtime(base_url: str, profiles: dict[str, Any]) -> Runtime:
    """A runtime whose model is the scripted one, with ``profiles``."""
    settings = load_settings(
        builtin={"enabled": False},
        agent={"model": "scripted", "base_url": base_url},
        profiles=profiles,
    )
    return build_runtime(settings)


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The parent delegates, the child quotes; each answers from what it got."""
    said = [m for m in body["messages"] if m["role"] == "tool"]
    if "delegate" in names(body):
        if not said:
            return tool_calls(("d1", "delegate", {"profile": "research", "task": "AAPL price?"}))
        return text("Research says AAPL is at $228.42 [tool:delegate-research:v1].")
    if not said:
        return tool_calls(("q1", "get_quotes", {"symbols": ["AAPL"]}))
    return text("AAPL trades at $228.42 [tool:quotes:v1].")


async def test_a_run_asks_another_profiles_agent() -> None:
    model = ScriptedModel([reply])
    with model.serve() as base_url:
        runtime = delegating_runtime(base_url, PROFILES)
        try:
            run = await runtime.runs.start(
                ChatRequest(question="AAPL?", profile="desk"), user="ana"
            )
            run = await runtime.runs.wait(run.run_id)
            events = [e async for e in runtime.runs.events(run.run_id)]
            runs = await runtime.runs.recent(5)
            assert runtime.audit is not None
            runtime.audit.flush()
            audited = [r.tool_name for r in runtime.audit.query(run_id=run.run_id)]
        finally:
            await runtime.aclose()
    assert run.state == "completed", run.error
    assert audited == ["delegate"]  # the child's own calls are audited under its run
    assert run.answer is not None and "228.42" in run.answer.answer_markdown
    parent_first, child_first = model.requests[0], model.requests[1]
    assert names(parent_first) == ["get_positions", "delegate"]
    delegate = parent_first["tools"][1]["function"]["parameters"]["properties"]["profile"]
    assert delegate.get("enum", [delegate.get("const")]) == ["research"]  # only those listed
    assert names(child_first) == ["get_quotes"]  # its own view, and no delegate again
    child = next(r for r in runs if r.run_id != run.run_id)
    assert (child.profile, child.user, child.state) == ("research", "ana", "completed")
    progress = [e.data["message"] for e in events if e.type == "tool_call.progress"]
    assert progress == [f"asked research: run {child.run_id}"]
    done = next(e for e in events if e.type == "tool_call.completed")
    assert done.data["name"] == "delegate" and done.data["source_id"] == "tool:delegate-research:v1"


def test_a_delegate_must_be_a_profile() -> None:
    settings = load_settings(profiles={"desk": {"delegates": ["reserch"]}, "research": {}})
    with pytest.raises(ConfigError, match=r"no profile 'reserch' \(did you mean 'research'\?\)"):
        build_runtime(settings)


async def test_an_approval_inside_the_child_is_said_on_the_parents_stream() -> None:
    import asyncio

    from tooldeck.agent.contracts import ConfirmRequest

    model = ScriptedModel([reply])
    careful = {**PROFILES, "research": {**PROFILES["research"], "confirm": ["get_quotes"]}}
    with model.serve() as base_url:
        runtime = delegating_runtime(base_url, careful)
        try:
            run = await runtime.runs.start(
                ChatRequest(question="AAPL?", profile="desk"), user="ana"
            )
            for _ in range(200):  # the child run waits for ana's approval
                waiting = [r for r in await runtime.runs.recent(5) if r.state == "waiting_input"]
                if waiting:
                    break
                await asyncio.sleep(0.05)
            (child,) = waiting
            assert child.profile == "research" and child.pending is not None
            await runtime.runs.confirm(child.run_id, ConfirmRequest(approve=True), user="ana")
            run = await runtime.runs.wait(run.run_id)
            events = [e async for e in runtime.runs.events(run.run_id)]
        finally:
            await runtime.aclose()
    assert run.state == "completed", run.error
    progress = [e.data["message"] for e in events if e.type == "tool_call.progress"]
    assert f"run {child.run_id} waits for your approval of get_quotes (decide it there)" in progress


SENDER = '''
from tooldeck import tool


@tool(effects=("egress",))
def send_note(text: str) -> str:
    """Send a note to the team's chat."""
    return "sent"
'''


async def test_a_delegated_run_starts_with_its_parents_labels(tmp_path: Path) -> None:
    """The parent read private data and delegated a task carrying it: the child's egress
    call used to run, the child having read nothing itself."""
    (tmp_path / "sender.py").write_text(SENDER)

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        tools = [t["function"]["name"] for t in body.get("tools", [])]
        said = [m for m in body["messages"] if m["role"] == "tool"]
        if "delegate" in tools:  # the parent
            if not said:
                return tool_calls(("p1", "get_positions", {"symbol": "AAPL"}))
            if len(said) == 1:
                task = "Post to the team: we hold 42 AAPL in the individual account"
                return tool_calls(("d1", "delegate", {"profile": "notes", "task": task}))
            return text("Done.")
        if not said:  # the child
            return tool_calls(("c1", "send_note", {"text": "we hold 42 AAPL"}))
        return text("Sent.")

    model = ScriptedModel([reply])
    with model.serve() as base_url:
        settings = load_settings(
            builtin={"enabled": False},
            brokerage={"enabled": True},
            tools=[str(tmp_path / "sender.py")],
            agent={"model": "scripted", "base_url": base_url},
            profiles={
                "desk": {"tools": ["get_positions"], "delegates": ["notes"]},
                "notes": {"tools": ["send_note"]},
            },
        )
        runtime = build_runtime(settings)
        try:
            parent = await runtime.runs.start(
                ChatRequest(question="Tell the team", profile="desk"), user="ana"
            )
            child = None
            for _ in range(200):
                child = next(
                    (r for r in await runtime.runs.recent(5) if r.profile == "notes"), None
                )
                if child is not None and child.state not in ("queued", "running"):
                    break
                await asyncio.sleep(0.05)
            assert child is not None and child.state == "waiting_input", child
            assert child.pending is not None and child.pending.tool == "send_note"  # asked
            await runtime.runs.confirm(child.run_id, ConfirmRequest(approve=False), user="ana")
            assert (await runtime.runs.wait(parent.run_id)).state in FINAL_STATES
        finally:
            await runtime.aclose()
