"""A module from a description to a served tool, built by an agent (issue 28, "done when").

A scripted OpenAI-compatible model on 127.0.0.1 plays both the agent and the ``llm``
tool: it builds a module wrapping a local HTTP price API, the code it drafts has a
planted bug that validation (in the sandbox, calling the real API) reports, ``repair``
sends that report to the model and writes its fix, validation passes, and the install
(with the content hash the validation returned, read from the tool result as a model
would) waits for a person. Then the new tool answers through REST and through a real
stdio MCP server process; a draft that misbehaves is installed and rolled back; and a
draft edited after its validation is refused.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters
from scripted_openai import ScriptedModel, text, tool_calls

from tooldeck.agent.contracts import ChatRequest, ConfirmRequest
from tooldeck.config import load_settings
from tooldeck.core import ToolContext
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CODE = '''"""Prices from the local price API."""

import httpx
from pydantic import Field

from tooldeck import tool


@tool
async def prices(symbol: str = Field(examples=["ACME"])) -> dict:
    """The last price of a symbol."""
    async with httpx.AsyncClient(base_url="{api}", timeout=10) as client:
        response = await client.get(f"/price/{{symbol}}")
        response.raise_for_status()
        data = response.json()
    return {{"symbol": data["symbol"], "price": data["{field}"] * {factor}}}
'''


class _Prices(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"symbol": self.path.rsplit("/", 1)[-1], "price": 12.5}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    """A price API on 127.0.0.1: ``GET /price/<symbol>`` → ``{symbol, price: 12.5}``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Prices)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def fenced(code: str) -> dict[str, Any]:
    return text(f"Here is the module:\n```python\n{code}```\n")


def install_what_validation_attested(body: dict[str, Any]) -> dict[str, Any]:
    """The agent reads the content hash from the last tool result, as a model would."""
    last = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
    content_hash = re.search(r'"content_hash":\s*"([0-9a-f]{64})"', last)
    assert content_hash, last
    arguments = {"action": "install", "module_id": "prices", "content_hash": content_hash[1]}
    return tool_calls(("c5", "module_pipeline", arguments))


MODULES = {"admin": True, "allow_hosts": ["127.0.0.1"], "admins": ["anonymous", "ada"]}


def settings(tmp_path: Path, model_url: str = "http://127.0.0.1:9/v1") -> Any:
    return load_settings(
        data_dir=tmp_path / "data",
        builtin={"roots": [str(tmp_path)], "llm": {"base_url": model_url, "model": "scripted"}},
        knowledge={"enabled": False},
        agent={"model": "scripted", "base_url": model_url},
        packs={"modules": MODULES},
        credentials={"use_keyring": False},
    )


async def test_an_agent_builds_repairs_and_installs_a_module_served_over_rest_and_mcp(
    tmp_path: Path, api: str
) -> None:
    model = ScriptedModel([
        tool_calls(("c1", "module_pipeline", {
            "action": "build", "name": "prices", "api_url": api,
            "description": "Prices from the local price API",
        })),
        fenced(CODE.format(api=api, field="cost", factor=1)),  # the llm, asked by build
        tool_calls(("c2", "module_pipeline", {"action": "validate", "module_id": "prices"})),
        tool_calls(("c3", "module_pipeline", {"action": "repair", "module_id": "prices"})),
        fenced(CODE.format(api=api, field="price", factor=1)),  # the llm, asked by repair
        tool_calls(("c4", "module_pipeline", {"action": "validate", "module_id": "prices"})),
        install_what_validation_attested,
        text("The prices module is installed."),
    ])  # fmt: skip
    with model.serve() as model_url:
        runtime = build_runtime(settings(tmp_path, model_url), load_entry_points=False)
        try:
            await runtime.start()
            run = await runtime.runs.start(ChatRequest(question="Make me a tool for prices"))
            run = await runtime.runs.wait(run.run_id)
            assert run.state == "waiting_input", run
            assert run.pending is not None and run.pending.arguments["action"] == "install"
            assert runtime.registry.get("prices") is None  # not before a person says yes
            run = await runtime.runs.confirm(run.run_id, ConfirmRequest(approve=True), user=None)
            assert run.state == "completed", run
            served = await runtime.provider.execute("prices", {"symbol": "ACME"})
            assert served.success and served.data == {"symbol": "ACME", "price": 12.5}
            assert served.metadata.tool_version.startswith("0.1.0+v1-")  # which version ran
        finally:
            await runtime.aclose()

    answer = model.requests[3]["messages"][-1]["content"]  # validate's answer, to the agent
    first_report = json.loads(answer.split("\n[source_id:")[0])
    failed = {c["name"]: c["output"] for c in first_report["checks"] if not c["passed"]}
    assert list(failed) == ["tool_calls"] and "KeyError: 'cost'" in failed["tool_calls"]
    repair_prompt = json.dumps(model.requests[4]["messages"])  # what repair sent the model
    assert "tool_calls" in repair_prompt and "cost" in repair_prompt

    with TestClient(
        create_app(build_runtime(settings(tmp_path))), base_url="http://127.0.0.1"
    ) as c:
        answer = c.post("/api/tools/execute/prices", json={"symbol": "XYZ"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"] == {"symbol": "XYZ", "price": 12.5}

    config = tmp_path / "tooldeck.toml"
    config.write_text(  # the module's calls reach its declared host only if it is allowed
        f'data_dir = "{tmp_path / "data"}"\n[builtin]\nenabled = false\n'
        '[packs.modules]\nallow_hosts = ["127.0.0.1"]\n'
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tooldeck", "mcp", "--config", str(config)]
    )
    async with Client(params) as client:
        assert "prices" in [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("prices", {"symbol": "MCP"})
        assert not result.is_error and result.structured_content == {"symbol": "MCP", "price": 12.5}


async def test_a_misbehaving_version_is_rolled_back_and_an_edit_after_validation_is_refused(
    tmp_path: Path, api: str
) -> None:
    runtime = build_runtime(settings(tmp_path), load_entry_points=False)
    ctx = ToolContext(user="ada")
    pipeline, admin = runtime.registry.get("module_pipeline"), runtime.registry.get("module_admin")
    assert pipeline is not None and admin is not None

    async def act(tool: Any, action: str, **arguments: Any) -> Any:
        # Straight to the tool: what an approved call runs (the approval is tested above).
        return await tool.execute({"action": action, **arguments}, ctx)

    async def price() -> Any:
        result = await runtime.provider.execute("prices", {"symbol": "ACME"})
        assert result.success, result.error
        return result.data["price"]

    try:
        await runtime.start()
        built = await act(pipeline, "build", name="prices", description="Prices", api_url=api)
        assert built.success and built.data["drafted_by"] == "template"  # no model here
        await act(pipeline, "write_code", module_id="prices",
                  code=CODE.format(api=api, field="price", factor=1))  # fmt: skip
        checked = (await act(pipeline, "validate", module_id="prices")).data
        assert checked["passed"], checked
        first = await act(pipeline, "install", module_id="prices",
                          content_hash=checked["content_hash"])  # fmt: skip
        assert first.success, first.error
        assert await price() == 12.5

        draft = (await act(admin, "create_draft", module_id="prices")).data["draft_id"]
        await act(admin, "edit_draft", module_id="prices", draft_id=draft, file_path="tools.py",
                  content=CODE.format(api=api, field="price", factor=100))  # fmt: skip
        diff = (await act(admin, "diff_draft", module_id="prices", draft_id=draft)).data["diff"]
        assert '+    return {"symbol": data["symbol"], "price": data["price"] * 100}' in diff
        assert (await act(admin, "validate_draft", module_id="prices", draft_id=draft)).data[
            "passed"
        ]  # it runs: validation cannot know the price is wrong
        assert (await act(admin, "promote_draft", module_id="prices", draft_id=draft)).success
        assert await price() == 1250.0  # the new version misbehaves
        versions = (await act(admin, "list_versions", module_id="prices")).data["versions"]
        rolled = await act(admin, "rollback_version", module_id="prices",
                           target_version_id=versions[0]["version_id"])  # fmt: skip
        assert rolled.success, rolled.error
        assert await price() == 12.5

        draft = (await act(admin, "create_draft", module_id="prices")).data["draft_id"]
        checked = (await act(pipeline, "validate", module_id="prices")).data
        assert checked["passed"] and checked["draft_id"] == draft
        await act(pipeline, "write_code", module_id="prices",
                  code=CODE.format(api=api, field="price", factor=-1))  # fmt: skip
        refused = await act(pipeline, "install", module_id="prices",
                            content_hash=checked["content_hash"])  # fmt: skip
        assert (
            refused.error is not None and "validated since its last edit" in refused.error.message
        )
        assert await price() == 12.5
    finally:
        await runtime.aclose()


async def test_build_keeps_the_template_when_the_model_cannot_be_reached(tmp_path: Path) -> None:
    runtime = build_runtime(settings(tmp_path), load_entry_points=False)  # llm: nothing listens
    try:
        await runtime.start()
        built = await runtime.provider.execute(
            "module_pipeline",
            {"action": "build", "name": "quotes", "description": "Quotes"},
            runtime.context(),  # with the services: the llm tool is reachable, and down
        )
        assert built.success, built.error
        assert built.data["drafted_by"] == "template"
        assert "the model could not write the code" in built.data["model_error"]
        checked = await runtime.provider.execute(
            "module_pipeline", {"action": "validate", "module_id": "quotes"}
        )
        assert checked.success and checked.data["passed"], checked.data  # the template works
    finally:
        await runtime.aclose()


ADAPTER = '''"""Steps from a pedometer (fixed here; a real one would ask its API)."""

from tooldeck.packs.context.adapter import ContextAdapter


class Pedometer(ContextAdapter):
    category, platform = "fitness", "pedometer"

    async def read(self):
        return [{"date": "2026-11-25", "steps": 8042}, {"date": "2026-11-26", "steps": 1200}], 2, {}

    def normalize_for_tools(self, records, *, include_alerts=True):
        return {"summary": {"steps": sum(r["steps"] for r in records)}, "alerts": []}


pedometer = Pedometer()
'''


async def test_a_context_adapter_module_is_validated_by_fetching_and_serves_user_context(
    tmp_path: Path,
) -> None:
    runtime = build_runtime(settings(tmp_path), load_entry_points=False)
    ctx = runtime.context(user=None)  # the single-user owner
    admin = runtime.registry.get("module_admin")
    assert admin is not None
    manifest = (
        'name = "steps"\nkind = "context_adapter"\ncategory = "fitness"\n'
        'description = "Steps from a pedometer"\n'
    )
    try:
        await runtime.start()
        created = await admin.execute(
            {"action": "create_draft", "module_id": "steps",
             "files": {"module.toml": manifest, "tools.py": ADAPTER}}, ctx,
        )  # fmt: skip
        draft = created.data["draft_id"]
        checked = await admin.execute(
            {"action": "validate_draft", "module_id": "steps", "draft_id": draft}, ctx
        )
        checks = {c["name"]: c for c in checked.data["checks"]}
        assert checked.data["passed"], checks
        assert checks["fetch"]["passed"] and checks["import"]["passed"]
        promoted = await admin.execute(
            {"action": "promote_draft", "module_id": "steps", "draft_id": draft}, ctx
        )
        assert promoted.success, promoted.error
        summary = await runtime.provider.execute(
            "user_context", {"action": "summary", "category": "fitness"}, ctx
        )
        assert summary.success, summary.error
        fitness = summary.data["categories"][0]
        assert fitness["status"] == "ok" and fitness["summary"] == {"steps": 9242}
        assert fitness["source_ids"] == ["context:fitness:pedometer"]
    finally:
        await runtime.aclose()
