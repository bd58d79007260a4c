"""The wrapper providers: composite, filtered, prefixed, confirming; change propagation."""

from __future__ import annotations

import pytest

from tooldeck.core import ToolDefinition, tool
from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest, arguments_hash
from tooldeck.core.context import ToolContext
from tooldeck.exceptions import DuplicateToolError
from tooldeck.providers import (
    ApprovalStore,
    CompositeToolsProvider,
    ConfirmingToolsProvider,
    ToolRegistry,
)
from tooldeck.providers.base import ToolsProvider

pytestmark = pytest.mark.anyio


@tool(name="search")
def search(query: str) -> dict[str, str]:
    """Search the knowledge base."""
    return {"hit": query}


@tool(name="get_quote")
def get_quote(symbol: str) -> dict[str, str]:
    """A quote."""
    return {"symbol": symbol}


@tool(name="delete_file", requires_confirmation=True)
def delete_file(path: str) -> dict[str, str]:
    """Delete a file."""
    return {"deleted": path}


@tool(name="transfer")
def transfer(amount: float, to: str = "savings") -> dict[str, object]:
    """Move money."""
    return {"amount": amount, "to": to}


class FakeMCP(ToolsProvider):
    """A provider whose definitions carry a server id, as MCPToolsProvider's do."""

    def __init__(self, server_id: str, names: list[str]) -> None:
        self.id = server_id
        self.names = names

    async def definitions(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(
                name=n,
                description=f"{n} on {self.id}",
                input_schema={"type": "object"},
                provider=self.id,
                server_id=self.id,
            )
            for n in self.names
        ]

    async def execute(self, name, arguments=None, ctx=None):  # type: ignore[no-untyped-def]
        from tooldeck.core.result import ToolResult

        return ToolResult.ok({"server": self.id, "tool": name})


def local() -> ToolRegistry:
    return ToolRegistry([search, get_quote, delete_file, transfer])


# -- composite -----------------------------------------------------------------------------


async def test_composite_merges_and_routes() -> None:
    root = CompositeToolsProvider([local(), FakeMCP("git", ["git_status"])])
    names = [d.name for d in await root.definitions()]
    assert names == ["search", "get_quote", "delete_file", "transfer", "git_status"]
    assert (await root.execute("git_status")).data == {"server": "git", "tool": "git_status"}
    assert (await root.execute("get_quote", {"symbol": "AAPL"})).data == {"symbol": "AAPL"}
    missing = await root.execute("git_stats")
    assert missing.error is not None and missing.error.type == "not_found"
    assert "Did you mean 'git_status'" in missing.error.message


async def test_name_clash_names_both_providers_and_prefix_resolves_it() -> None:
    root = CompositeToolsProvider([FakeMCP("github", ["search"]), local()])
    with pytest.raises(DuplicateToolError) as info:
        await root.definitions()
    assert "'github'" in str(info.value) and "'local'" in str(info.value)
    assert "prefix" in str(info.value)

    root = CompositeToolsProvider(
        [FakeMCP("github", ["search"]), local()], prefixes={"github": "gh"}
    )
    names = [d.name for d in await root.definitions()]
    assert "gh_search" in names and "search" in names
    result = await root.execute("gh_search")
    assert result.data == {"server": "github", "tool": "search"}
    assert (await root.execute("search", {"query": "x"})).data == {"hit": "x"}


async def test_prefixed_view_renames_and_rejects_unprefixed_names() -> None:
    view = local().prefixed("kb")
    assert [d.name for d in await view.definitions()][:2] == ["kb_search", "kb_get_quote"]
    result = await view.execute("kb_search", {"query": "etf"})
    assert result.data == {"hit": "etf"} and result.metadata.tool_name == "kb_search"
    assert (await view.execute("search", {"query": "etf"})).error.type == "not_found"  # type: ignore[union-attr]
    unknown = await view.execute("kb_serch", {"query": "etf"})
    assert unknown.error is not None and unknown.error.details == {
        "closest": ["kb_search", "kb_transfer"]
    }
    assert unknown.error.message.endswith(
        "Available: kb_search, kb_get_quote, kb_delete_file, kb_transfer."
    )
    invalid = await view.execute("kb_search", {"qeury": "etf"})
    assert invalid.error is not None
    assert invalid.error.message.startswith("Invalid arguments for kb_search: qeury:")


# -- filtered --------------------------------------------------------------------------------


async def test_filtered_view_globs_local_tools_and_picks_servers() -> None:
    root = CompositeToolsProvider(
        [local(), FakeMCP("git", ["git_status"]), FakeMCP("time", ["now"])]
    )
    view = root.filtered(tools=["get_*", "search"], servers=["time"])
    assert [d.name for d in await view.definitions()] == ["search", "get_quote", "now"]
    assert (await view.execute("now")).success
    assert (await view.execute("search", {"query": "q"})).success


async def test_hidden_tool_reads_exactly_like_an_unknown_one() -> None:
    view = CompositeToolsProvider([local(), FakeMCP("git", ["git_status"])]).filtered(
        tools=["get_quote"], servers=[]
    )
    hidden = await view.execute("git_status", {}, ToolContext(request_id="r1"))
    unknown = await view.execute("no_such_tool", {}, ToolContext(request_id="r1"))
    assert hidden.error is not None and unknown.error is not None
    assert hidden.error.type == unknown.error.type == "not_found"
    assert hidden.error.message == "Unknown tool 'git_status'. Available: get_quote."
    assert unknown.error.message == "Unknown tool 'no_such_tool'. Available: get_quote."


async def test_views_follow_tool_list_changes() -> None:
    registry = ToolRegistry([search])
    view = registry.filtered(tools=["*"]).confirming(["get_*"])
    assert [d.name for d in await view.definitions()] == ["search"]
    registry.register(get_quote)
    definitions = await view.definitions()
    assert [d.name for d in definitions] == ["search", "get_quote"]
    assert definitions[1].requires_confirmation  # the new tool got the view's rule
    assert (await view.execute("get_quote", {"symbol": "A"})).error.type == "confirmation_required"  # type: ignore[union-attr]


async def test_filtered_view_does_not_close_the_shared_provider() -> None:
    closed: list[str] = []

    class Tracked(FakeMCP):
        async def close(self) -> None:
            closed.append(self.id)

    root = Tracked("git", ["git_status"])
    await root.filtered().close()
    assert closed == []
    await root.close()
    assert closed == ["git"]


# -- confirming ------------------------------------------------------------------------------


async def test_confirmation_required_without_callback_then_approved_call_runs() -> None:
    store = ApprovalStore()
    decisions: list[str] = []
    store.on_decision(lambda a: decisions.append(f"{a.request.tool}:{a.status}"))
    view = local().confirming(approvals=store)
    ctx = ToolContext(user="ana")

    first = await view.execute("delete_file", {"path": "/tmp/x"}, ctx)
    assert first.error is not None and first.error.type == "confirmation_required"
    details = first.error.details or {}
    assert details["tool"] == "delete_file" and details["principal"] == "ana"
    assert details["arguments"] == {"path": "/tmp/x"}
    assert details["arguments_hash"] == arguments_hash("delete_file", {"path": "/tmp/x"})
    again = await view.execute("delete_file", {"path": "/tmp/x"}, ctx)
    assert again.error is not None and again.error.details["approval_id"] == details["approval_id"]  # type: ignore[index]
    assert [a.request.approval_id for a in store.pending()] == [details["approval_id"]]

    store.approve(details["approval_id"], approver="boss")
    # bound to the exact call: other arguments or another user need their own approval
    assert (
        await view.execute("delete_file", {"path": "/etc"}, ctx)
    ).error.type == "confirmation_required"  # type: ignore[union-attr]
    other = await view.execute("delete_file", {"path": "/tmp/x"}, ToolContext(user="bob"))
    assert other.error is not None and other.error.type == "confirmation_required"
    ran = await view.execute("delete_file", '{"path": "/tmp/x"}', ctx)  # JSON text, same call
    assert ran.data == {"deleted": "/tmp/x"}
    # one approval, one call
    assert (
        await view.execute("delete_file", {"path": "/tmp/x"}, ctx)
    ).error.type == "confirmation_required"  # type: ignore[union-attr]
    assert decisions == ["delete_file:approved"]


async def test_approver_can_edit_arguments_or_deny_with_a_message() -> None:
    store = ApprovalStore()
    view = local().confirming(["transfer"], approvals=store)
    pending = await view.execute("transfer", {"amount": 5000})
    approval_id = pending.error.details["approval_id"]  # type: ignore[union-attr,index]
    store.approve(approval_id, arguments={"amount": 500, "to": "checking"})
    ran = await view.execute("transfer", {"amount": 5000})
    assert ran.data == {"amount": 500.0, "to": "checking"}

    pending = await view.execute("transfer", {"amount": 1})
    store.deny(pending.error.details["approval_id"], "not today", approver="ana")  # type: ignore[union-attr,index]
    denied = await view.execute("transfer", {"amount": 1})
    assert denied.error is not None and denied.error.type == "denied"
    assert "ana" in denied.error.message and "not today" in denied.error.message
    with pytest.raises(ValueError, match="already"):
        store.approve(approval_id)
    with pytest.raises(KeyError):
        store.approve("nope")


async def test_callback_on_the_context_decides_at_once() -> None:
    seen: list[ConfirmationRequest] = []

    async def approve_small(request: ConfirmationRequest) -> ConfirmationDecision:
        seen.append(request)
        if request.arguments["amount"] > 100:
            return ConfirmationDecision(approved=False, message="too much")
        return ConfirmationDecision(approved=True, arguments={**request.arguments, "to": "x"})

    view = local().confirming(["transfer"])
    ok = await view.execute("transfer", {"amount": 10}, ToolContext(confirm=approve_small))
    assert ok.data == {"amount": 10.0, "to": "x"}
    no = await view.execute("transfer", {"amount": 1000}, ToolContext(confirm=approve_small))
    assert no.error is not None and no.error.type == "denied" and "too much" in no.error.message
    assert [r.tool for r in seen] == ["transfer", "transfer"]

    def broken(request: ConfirmationRequest) -> bool:
        raise RuntimeError("prompt crashed")

    failed = await view.execute("transfer", {"amount": 1}, ToolContext(confirm=broken))
    assert failed.error is not None and failed.error.type == "denied"
    assert "prompt crashed" in failed.error.message
    # plain bools work too, and unguarded tools never ask
    assert (
        await view.execute("transfer", {"amount": 1}, ToolContext(confirm=lambda r: True))
    ).success
    assert (await view.execute("search", {"query": "q"}, ToolContext(confirm=broken))).success


async def test_approvals_expire() -> None:
    now = [1000.0]
    store = ApprovalStore(ttl_s=60, clock=lambda: now[0])
    view = ConfirmingToolsProvider(local(), approvals=store)
    pending = await view.execute("delete_file", {"path": "a"})
    approval_id = pending.error.details["approval_id"]  # type: ignore[union-attr,index]
    store.approve(approval_id)
    now[0] += 61
    late = await view.execute("delete_file", {"path": "a"})
    assert late.error is not None and late.error.type == "confirmation_required"
    assert store.get(approval_id).status == "expired"  # type: ignore[union-attr]


async def test_bad_json_arguments_reach_the_tool_for_a_validation_error() -> None:
    view = local().confirming(approvals=ApprovalStore())
    result = await view.execute("delete_file", "{not json")
    assert result.error is not None and result.error.type == "validation"


async def test_definitions_mark_confirmation_from_rule_and_globs() -> None:
    view = ConfirmingToolsProvider(
        local(), tools=["get_*"], rule=lambda d: d.requires_confirmation or d.name == "search"
    )
    flags = {d.name: d.requires_confirmation for d in await view.definitions()}
    assert flags == {"search": True, "get_quote": True, "delete_file": True, "transfer": False}
    # the rule decides (the policy starts from the tool's own flag): it may relax it,
    # but a name listed in ``tools`` is always guarded
    relaxed = ConfirmingToolsProvider(local(), tools=["get_*"], rule=lambda d: False)
    flags = {d.name: d.requires_confirmation for d in await relaxed.definitions()}
    assert flags == {"search": False, "get_quote": True, "delete_file": False, "transfer": False}
