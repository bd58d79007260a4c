"""tooldeck's tools inside other agent frameworks (issue 32, part 3), each library real.

- The OpenAI Agents SDK's own runner and chat-completions model, against a scripted
  OpenAI-compatible server on 127.0.0.1: what the SDK sends (strict schemas) and what
  its tools answer; ``needs_approval`` interrupts, ``RunState.approve`` resumes.
- pydantic-ai's own ``FunctionModel``: the toolset's calls, and deferred approval.
- LangChain's ``create_agent`` with its fake chat model: tool calls, and approval through
  its human-in-the-loop middleware (interrupt, resume with approve or reject).

Every call lands in tooldeck's audit with its provenance and, when approved in the
framework, the framework as approver.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_openai import ScriptedModel, text, tool_calls

from tooldeck.config import load_settings
from tooldeck.runtime import Runtime, build_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

TOOLS = '''
from tooldeck import tool


@tool(requires_confirmation=True)
def refund(order: str, amount: float) -> dict:
    """Refund an order.

    Args:
        order: The order id.
        amount: How much, in EUR.
    """
    return {"refunded": order, "amount": amount}


@tool
def tally(counts: dict[str, int]) -> int:
    """Add up counts by name.

    Args:
        counts: A count per name.
    """
    return sum(counts.values())
'''


@pytest.fixture
async def runtime(tmp_path: Path) -> Any:
    (tmp_path / "shop.py").write_text(TOOLS)
    built = build_runtime(
        load_settings(
            builtin={"enabled": False},
            brokerage={"enabled": True},
            tools=[str(tmp_path / "shop.py")],
            profiles={"support": {"tools": ["get_quotes", "refund"]}},
        )
    )
    await built.start()
    try:
        yield built
    finally:
        await built.aclose()


def audit_rows(runtime: Runtime) -> list[Any]:
    assert runtime.audit is not None
    runtime.audit.flush()
    return runtime.audit.query(limit=50)


def approvers(runtime: Runtime) -> dict[str, str]:
    """Who approved each tool's calls, from the audit's confirmation decisions."""
    assert runtime.audit is not None
    return {d["tool_name"]: d["approver"] for d in runtime.audit.decisions()}


async def test_openai_agents_sdk_runs_tooldeck_tools_with_strict_schemas_and_approval(
    runtime: Runtime,
) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from openai import AsyncOpenAI

    from tooldeck.adapters.openai_agents import openai_agents_tools

    model = ScriptedModel(
        [
            tool_calls(
                ("q1", "get_quotes", {"symbols": ["AAPL"]}),
                ("t1", "tally", {"counts": [{"key": "a", "value": 2}, {"key": "b", "value": 3}]}),
            ),
            tool_calls(("r1", "refund", {"order": "A-17", "amount": 12.5})),
            text("Done."),
        ]
    )
    tools = await openai_agents_tools(runtime.view(None), runtime.context(user="ana"))
    by_name = {t.name: t for t in tools}
    assert by_name["tally"].strict_json_schema  # a map: strict as pairs, not a fallback
    assert by_name["refund"].needs_approval and not by_name["get_quotes"].needs_approval
    with model.serve() as base_url:
        async with AsyncOpenAI(base_url=base_url, api_key="test") as client:
            agent = Agent(
                name="shop",
                tools=tools,  # type: ignore[arg-type]
                model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
            )
            config = RunConfig(tracing_disabled=True)
            first = await Runner.run(agent, "Quote AAPL, tally, refund A-17", run_config=config)
            assert [i.raw_item.name for i in first.interruptions] == ["refund"]  # type: ignore[union-attr]
            state = first.to_state()
            state.approve(first.interruptions[0])
            final = await Runner.run(agent, state, run_config=config)
    assert final.final_output == "Done."
    sent = model.requests[0]["tools"]
    assert all(t["function"].get("strict") for t in sent)
    outputs = {
        m["tool_call_id"]: m["content"]
        for r in model.requests
        for m in r["messages"]
        if m.get("role") == "tool"
    }
    assert "228.42" in outputs["q1"] and "tool:quotes:v1" in outputs["q1"]
    assert outputs["t1"] == "5"  # the pairs became the map
    assert json.loads(outputs["r1"]) == {"refunded": "A-17", "amount": 12.5}
    rows = {r.request_id: r for r in audit_rows(runtime)}
    assert rows["q1"].source_id == "tool:quotes:v1" and rows["q1"].user == "ana"
    assert rows["r1"].status == "success" and approvers(runtime) == {"refund": "openai-agents"}


async def test_pydantic_ai_toolset_calls_and_defers_approval(runtime: Runtime) -> None:
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from tooldeck.adapters.pydantic_ai import ToolDeckToolset

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(",".join(sorted(t.name for t in info.function_tools)))
        returned = [
            p for m in messages for p in getattr(m, "parts", []) if p.part_kind == "tool-return"
        ]
        if not returned:
            return ModelResponse(
                parts=[
                    ToolCallPart("get_quotes", {"symbols": ["MSFT"]}, tool_call_id="p1"),
                    ToolCallPart("refund", {"order": "B-2", "amount": 3}, tool_call_id="p2"),
                ]
            )
        return ModelResponse(parts=[TextPart(" | ".join(str(p.content) for p in returned))])

    agent = Agent(
        FunctionModel(model),
        toolsets=[ToolDeckToolset(runtime.view(None), runtime.context(user="bo"))],
        output_type=[str, DeferredToolRequests],
    )
    first = await agent.run("Quote MSFT and refund B-2")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_name for c in first.output.approvals] == ["refund"]
    final = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"p2": True}),
    )
    assert "tool:quotes:v1" in final.output and "refunded" in final.output
    assert "get_quotes" in seen[0] and "refund" in seen[0]
    rows = {r.request_id: r for r in audit_rows(runtime)}
    assert rows["p1"].source_id == "tool:quotes:v1" and rows["p1"].user == "bo"
    assert (rows["p1"].session_id or "").startswith("pydantic-ai:")  # the flow rules' run
    assert rows["p2"].session_id == rows["p1"].session_id  # resumed: the same conversation
    assert rows["p2"].status == "success" and approvers(runtime) == {"refund": "pydantic-ai"}


async def test_langchain_both_ways(runtime: Runtime) -> None:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import ToolException
    from langchain_core.tools import tool as langchain_tool

    from tooldeck.adapters.langchain import from_langchain, langchain_tools
    from tooldeck.providers import ToolRegistry

    tools = {
        t.name: t for t in await langchain_tools(runtime.view(None), runtime.context(user="cy"))
    }
    call = {"name": "get_quotes", "args": {"symbols": ["NVDA"]}, "id": "lc1", "type": "tool_call"}
    message = await tools["get_quotes"].ainvoke(call)  # as a LangChain agent runs a tool call
    assert isinstance(message, ToolMessage) and message.tool_call_id == "lc1"
    assert "tool:quotes:v1" in message.content
    assert message.status == "success"
    gated = await tools["refund"].ainvoke({"order": "C-3", "amount": 1})
    assert "confirmation_required" in gated or "approve" in gated.lower()  # no confirm given
    assert any(r.tool_name == "get_quotes" and r.user == "cy" for r in audit_rows(runtime))
    # issue 55: a failed call is an error to the agent, and a profile's view is named in
    # the rows although the caller's context names no profile
    support = await langchain_tools(runtime.view("support"), runtime.context(user="dee"))
    refund = next(t for t in support if t.name == "refund")
    call = {
        "name": "refund",
        "args": {"order": "C-4", "amount": 2},
        "id": "lc2",
        "type": "tool_call",
    }
    failed_message = await refund.ainvoke(call)
    assert isinstance(failed_message, ToolMessage) and failed_message.status == "error"
    assert "confirmation" in failed_message.content
    rows = [r for r in audit_rows(runtime) if r.user == "dee"]
    assert [(r.tool_name, r.profile, r.status) for r in rows] == [("refund", "support", "error")]

    @langchain_tool
    def convert(amount: float, rate: float = 1.1) -> float:
        """Convert an amount at a rate.

        Args:
            amount: How much.
            rate: The rate.
        """
        if amount < 0:
            raise ToolException("amount must not be negative")
        return round(amount * rate, 2)

    imported = ToolRegistry([from_langchain(convert)])
    (definition,) = imported.list_definitions()
    assert definition.input_schema["required"] == ["amount"]
    assert (await imported.execute("convert", {"amount": 10})).data == 11.0
    failed = await imported.execute("convert", {"amount": -1})
    assert failed.error is not None and failed.error.type == "execution"
    assert "must not be negative" in failed.error.message
    refused = await imported.execute("convert", {"amount": "ten"})
    assert refused.error is not None and refused.error.type == "validation"


async def test_langchains_own_agent_asks_through_its_middleware_then_tooldeck_records_it(
    runtime: Runtime,
) -> None:
    """LangChain's ``create_agent`` loop with its fake chat model and its HITL middleware."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from tooldeck.adapters.langchain import human_in_the_loop, langchain_tools

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def turn(*calls: tuple[str, str, dict[str, Any]]) -> AIMessage:
        return AIMessage(
            content="",
            tool_calls=[{"id": i, "name": n, "args": a, "type": "tool_call"} for i, n, a in calls],
        )

    model = Model(
        messages=iter(
            [
                turn(
                    ("r1", "refund", {"order": "A-1", "amount": 5}),
                    ("q1", "get_quotes", {"symbols": ["AAPL"]}),
                ),
                AIMessage(content="Refunded."),
                turn(("r2", "refund", {"order": "B-2", "amount": 9})),
                AIMessage(content="Not refunded."),
            ]
        )
    )
    tools = await langchain_tools(runtime.view(None), runtime.context(user="cy", session_id="lc"))
    middleware = human_in_the_loop(tools)
    assert set(middleware.interrupt_on) == {"refund"}  # only what tooldeck would ask for
    agent = create_agent(model, tools, middleware=[middleware], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t1"}}

    paused = await agent.ainvoke({"messages": [{"role": "user", "content": "Refund A-1"}]}, thread)
    [asked] = paused["__interrupt__"]
    assert [a["name"] for a in asked.value["action_requests"]] == ["refund"]
    assert not any(r.tool_name == "refund" for r in audit_rows(runtime))  # nothing ran yet
    done = await agent.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), thread)
    refunded = next(m for m in done["messages"] if getattr(m, "tool_call_id", None) == "r1")
    assert '"refunded":"A-1"' in refunded.content
    assert approvers(runtime) == {"refund": "langchain"}

    await agent.ainvoke({"messages": [{"role": "user", "content": "Refund B-2"}]}, thread)
    await agent.ainvoke(
        Command(resume={"decisions": [{"type": "reject", "message": "no"}]}), thread
    )
    rows = audit_rows(runtime)
    assert [r.status for r in rows if r.tool_name == "refund"] == ["success"]  # B-2 never ran
    assert any(r.tool_name == "get_quotes" and r.user == "cy" for r in rows)

    # the same tools in an agent without the middleware: tooldeck's own confirmation
    bare = create_agent(
        Model(
            messages=iter(
                [turn(("r3", "refund", {"order": "C-3", "amount": 1})), AIMessage(content="?")]
            )
        ),
        tools,
    )
    answered = await bare.ainvoke({"messages": [{"role": "user", "content": "Refund C-3"}]})
    gated = next(m for m in answered["messages"] if getattr(m, "tool_call_id", None) == "r3")
    assert "confirmation" in gated.content.lower() and '"refunded"' not in gated.content
