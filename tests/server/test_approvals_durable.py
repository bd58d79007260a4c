"""Approvals that survive parallel calls, a restart and a second channel (issue 31, part 4).

Three calls of a tool that needs approval are issued at once: two over REST, one over
MCP. The server restarts (a new runtime on the same data dir: everything in memory is
gone). The REST caller approves its two through ``/api/approvals``; the MCP user denies
the third in a new MCP session. Exactly the two approved calls run, each with its own
arguments, once, however often their clients repeat them. Repeated 100 times.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from tooldeck.config import load_settings
from tooldeck.core import tool
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.app import create_app
from tooldeck.server.mcp import create_mcp_server

PAID: list[tuple[str, int]] = []


@tool(name="transfer", requires_confirmation=True)
def transfer(to: str, cents: int) -> dict[str, Any]:
    """Move money (records the payment).

    Args:
        to: Payee.
        cents: Amount.
    """
    PAID.append((to, cents))
    return {"paid": to, "cents": cents}


def start(data_dir: Path, **settings: Any) -> Runtime:
    runtime = build_runtime(
        load_settings(data_dir=data_dir, builtin={"enabled": False}, **settings)
    )
    runtime.registry.register(transfer)
    return runtime


async def deny(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": False, "reason": "not this one"})


async def one_round(data_dir: Path, n: int) -> None:
    calls = [
        ({"to": f"ann-{n}", "cents": 100}, f"k-a-{n}"),
        ({"to": f"bob-{n}", "cents": 200}, f"k-b-{n}"),
    ]
    mcp_call = {"to": f"eve-{n}", "cents": 300}

    before = start(data_dir)
    rest_ctx = [before.context(channel="rest", idempotency_key=key) for _, key in calls]
    asked = await asyncio.gather(
        *(
            before.provider.execute("transfer", args, c)
            for (args, _), c in zip(calls, rest_ctx, strict=True)
        ),
        before.provider.execute("transfer", mcp_call, before.context(channel="mcp:session-1")),
    )
    assert all(r.error is not None and r.error.type == "confirmation_required" for r in asked)
    ids = [r.error.details["approval_id"] for r in asked]  # type: ignore[union-attr,index]
    assert len(set(ids)) == 3
    await before.aclose()  # the restart

    after = start(data_dir)
    with TestClient(create_app(after), base_url="http://127.0.0.1") as rest:  # closes it
        waiting = {a["approval_id"] for a in rest.get("/api/approvals").json()}
        assert set(ids[:2]) <= waiting  # the REST caller's two outlived the restart
        for approval_id, body in zip(ids[:2], [{}, None], strict=True):  # no body: curl -X POST
            decided = rest.post(f"/api/approvals/{approval_id}/approve", json=body)
            assert decided.status_code == 200, decided.text
        for args, key in calls * 3:  # each client repeats its call, some more than once
            ran = rest.post(
                "/api/tools/execute/transfer", json=args, headers={"Idempotency-Key": key}
            )
            assert ran.status_code == 200, ran.text
            assert ran.json()["data"] == {"paid": args["to"], "cents": args["cents"]}
        async with Client(create_mcp_server(after), elicitation_callback=deny) as mcp:
            denied = await mcp.call_tool("transfer", mcp_call)
        assert denied.is_error and "not this one" in denied.content[0].text  # type: ignore[union-attr]
    assert PAID[-2:] == [(f"ann-{n}", 100), (f"bob-{n}", 200)] or PAID[-2:] == [
        (f"bob-{n}", 200),
        (f"ann-{n}", 100),
    ]


@pytest.mark.anyio
async def test_two_approved_over_rest_one_denied_over_mcp_across_a_restart(tmp_path: Path) -> None:
    PAID.clear()
    rounds = 100
    for n in range(rounds):
        await one_round(tmp_path / "data", n)
    assert len(PAID) == 2 * rounds  # exactly the approved ones, each once
    assert not any(to.startswith("eve-") for to, _ in PAID)


@pytest.mark.anyio
async def test_pending_approvals_expire_across_a_restart_as_configured(tmp_path: Path) -> None:
    PAID.clear()
    before = start(tmp_path, approvals={"ttl_s": 0.3})
    asked = await before.provider.execute(
        "transfer", {"to": "ann", "cents": 1}, before.context(channel="rest")
    )
    approval_id = asked.error.details["approval_id"]  # type: ignore[union-attr,index]
    await before.aclose()
    after = start(tmp_path, approvals={"ttl_s": 0.3})
    assert after.approvals.get(approval_id).status == "pending"  # type: ignore[union-attr]
    await asyncio.sleep(0.4)
    assert after.approvals.get(approval_id).status == "expired"  # type: ignore[union-attr]
    with TestClient(create_app(after), base_url="http://127.0.0.1") as rest:
        late = rest.post(f"/api/approvals/{approval_id}/approve", json={})
        assert late.status_code in (404, 409), late.text
        again = rest.post("/api/tools/execute/transfer", json={"to": "ann", "cents": 1})
        assert again.json()["error"]["type"] == "confirmation_required"
    assert PAID == []
