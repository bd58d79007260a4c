"""An approval is decided only by the principal and channel it was asked of (issue 18).

The attacks: an MCP client attaching ``inputResponses {"confirm:<id>": accept}`` for a
REST caller's approval to an unrelated ``tools/call``; an anonymous REST caller
approving someone else's call; a caller claiming a name with ``X-User`` when the
server does not trust the header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tooldeck.config import load_settings
from tooldeck.core.confirmation import ConfirmationDecision
from tooldeck.exceptions import ConfigError
from tooldeck.providers.approvals import Decider
from tooldeck.runtime import Runtime, build_runtime
from tooldeck.server.mcp_confirm import apply_answers

pytestmark = pytest.mark.anyio


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    settings = load_settings(
        data_dir=tmp_path, builtin={"enabled": False}, profiles={"p": {"confirm": ["get_*"]}}
    )
    rt = build_runtime(settings)
    yield rt
    await rt.aclose()


async def pending(runtime: Runtime, channel: str, **arguments: Any) -> str:
    result = await runtime.view("p").execute(
        "get_quotes", arguments, runtime.context(profile="p", channel=channel)
    )
    assert result.error is not None and result.error.type == "confirmation_required"
    return str(result.error.details["approval_id"])


def answer(approval_id: str, name: str, arguments: dict[str, Any]) -> types.CallToolRequestParams:
    accept = types.ElicitResult(action="accept", content={"approve": True})
    return types.CallToolRequestParams(
        name=name, arguments=arguments, input_responses={f"confirm:{approval_id}": accept}
    )


async def test_an_mcp_answer_cannot_decide_a_rest_callers_approval(runtime: Runtime) -> None:
    approval_id = await pending(runtime, "rest", symbol="AAPL")
    for params in (  # attached to an unrelated call, and to the very same call
        answer(approval_id, "get_positions", {"symbol": "MSFT"}),
        answer(approval_id, "get_quotes", {"symbol": "AAPL"}),
    ):
        await apply_answers(runtime, params, "mcp", None)
        await apply_answers(runtime, params, "mcp:other-connection", None)
    assert runtime.approvals.get(approval_id).status == "pending"  # type: ignore[union-attr]


async def test_an_mcp_answer_decides_only_the_repeat_of_its_own_call(runtime: Runtime) -> None:
    approval_id = await pending(runtime, "mcp:abc", symbol="AAPL")
    same = answer(approval_id, "get_quotes", {"symbol": "AAPL"})
    await apply_answers(
        runtime, answer(approval_id, "get_quotes", {"symbol": "MSFT"}), "mcp:abc", None
    )
    await apply_answers(runtime, same, "mcp:xyz", None)
    await apply_answers(runtime, same, "mcp:abc", "bob")  # another user on that channel
    assert runtime.approvals.get(approval_id).status == "pending"  # type: ignore[union-attr]
    await apply_answers(runtime, same, "mcp:abc", None)
    assert runtime.approvals.get(approval_id).status == "approved"  # type: ignore[union-attr]


async def test_deciders_other_than_the_asker_are_refused(runtime: Runtime) -> None:
    approval_id = await pending(runtime, "rest", symbol="AAPL")
    yes = ConfirmationDecision(approved=True)
    for by in (
        Decider(principal="anonymous", channel="cli"),
        Decider(principal="eve", channel="rest"),
        Decider(principal="anonymous", channel="mcp"),
    ):
        with pytest.raises(PermissionError, match="asked of anonymous on channel rest"):
            runtime.approvals.decide(approval_id, yes, by)
    privileged = Decider(principal="lead", channel="rest", privileged=True)
    assert runtime.approvals.decide(approval_id, yes, privileged).status == "approved"


def test_approvers_need_a_trusted_identity(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="trust_user_header"):
        load_settings(data_dir=tmp_path, approvals={"approvers": ["lead"]})


async def test_a_page_link_decides_its_own_approval_and_nothing_else(runtime: Runtime) -> None:
    """The secret of an approval's page (URL-mode elicitation) over REST."""
    from fastapi.testclient import TestClient

    from tooldeck.server.app import create_app

    mine = await pending(runtime, "mcp:stdio-1", symbol="AAPL")
    other = await pending(runtime, "mcp:stdio-2", symbol="MSFT")
    token = runtime.approvals.link(mine)
    assert runtime.approvals.link(mine) == token  # one link per approval
    assert "link_token" not in runtime.approvals.get(mine).as_dict()  # type: ignore[union-attr]
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        seen = client.get(f"/api/approvals/{mine}", headers={"x-approval-token": token})
        assert seen.status_code == 200 and seen.json()["tool"] == "get_quotes"
        assert token not in seen.text
        for approval_id, secret in ((other, token), (mine, "x" * len(token))):
            looked = client.get(
                f"/api/approvals/{approval_id}", headers={"x-approval-token": secret}
            )
            assert looked.status_code == 404
            tried = client.post(f"/api/approvals/{approval_id}/approve", json={"token": secret})
            assert tried.status_code == 403, tried.text
        done = client.post(f"/api/approvals/{mine}/approve", json={"token": token})
        assert done.status_code == 200 and done.json()["status"] == "approved"
        assert client.get(f"/api/approvals/{other}").status_code == 200  # anonymous: its own
        assert runtime.approvals.get(other).status == "pending"  # type: ignore[union-attr]
