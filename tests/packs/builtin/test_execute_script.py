"""``execute_script``: tool calls from a sandboxed script go through the caller's stack."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from typer.testing import CliRunner

from tooldeck.cli.app import app
from tooldeck.config import load_settings
from tooldeck.runtime import Runtime, build_runtime

pytestmark = pytest.mark.anyio

SCRIPT = """
quote = tools.get_quotes(symbol="AAPL")
held = tools.get_positions(symbol="AAPL")
try:
    tools.get_transfers()
    hidden = "reached"
except ToolCallError as exc:
    hidden = exc.type
price = quote["quotes"][0]["price"]
result = {"value": round(price * sum(p["quantity"] for p in held["positions"]), 2), "hidden": hidden}
"""


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    settings = load_settings(
        profiles={"analyst": {"tools": ["get_quotes", "get_positions", "execute_script"]}},
        builtin={"python": {"preload": ["json"]}},
        policy={"tools": {"execute_script": {"requires_confirmation": False}}},  # trusted
    )
    runtime = build_runtime(settings)
    await runtime.start()
    yield runtime
    await runtime.aclose()


async def test_script_reaches_the_profiles_tools_and_not_the_hidden_one(runtime: Runtime) -> None:
    view = runtime.view("analyst")
    result = await view.execute(
        "execute_script", {"code": SCRIPT}, runtime.context(profile="analyst")
    )
    assert result.success, result.error
    assert result.data["result"]["hidden"] == "not_found"
    assert result.data["result"]["value"] > 0
    calls = result.data["tool_calls"]
    assert [(c["name"], c["status"], c["error_type"], c["source_id"]) for c in calls] == [
        ("get_quotes", "success", None, "tool:quotes:v1"),
        ("get_positions", "success", None, "tool:positions:v1"),
        ("get_transfers", "error", "not_found", None),
    ]
    assert all(c["as_of"] for c in calls[:2])
    assert result.source_id == "tool:execute_script:v1"  # its own declared provenance
    assert runtime.audit is not None
    audited = {
        (r.tool_name, r.status, r.error_type, r.profile) for r in runtime.audit.query(limit=10)
    }
    assert {
        ("get_quotes", "success", None, "analyst"),
        ("get_positions", "success", None, "analyst"),
        ("get_transfers", "error", "not_found", "analyst"),
        ("execute_script", "success", None, "analyst"),
    } <= audited


async def test_unfiltered_caller_reaches_the_tool_and_errors_raise_in_the_script(
    runtime: Runtime,
) -> None:
    code = (
        "try:\n    tools.get_quotes(symbol='NOPE')\nexcept ToolCallError as exc:\n"
        "    result = [exc.tool, exc.type]\n"
    )
    result = await runtime.provider.execute("execute_script", {"code": code}, runtime.context())
    assert result.data["result"] == ["get_quotes", "validation"]
    recursive = await runtime.provider.execute(
        "execute_script", {"code": "tools.execute_script(code='result = 1')"}, runtime.context()
    )
    assert (
        recursive.error is not None
        and "a script cannot call execute_script" in recursive.error.message
    )
    assert recursive.error.details["tool_calls"][0]["error_type"] == "denied"


def test_cli_call_python_needs_confirmation_then_returns_six() -> None:
    args = json.dumps({"code": "result = sum(x)", "context": {"x": [1, 2, 3]}})
    held = CliRunner().invoke(app, ["call", "python", "--args", args])  # no terminal, no --yes
    assert held.exit_code == 1
    assert json.loads(held.output)["error"]["type"] == "confirmation_required"
    result = CliRunner().invoke(app, ["call", "python", "--args", args, "--yes"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["data"]["result"] == 6
