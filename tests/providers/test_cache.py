"""The result cache (issue 32, part 7): reused per caller, ended by writes, in the audit
and the metrics. Through a real runtime's stack and its SQLite audit."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tooldeck.config import load_settings
from tooldeck.core import ToolAnnotations, tool
from tooldeck.providers import ToolRegistry
from tooldeck.providers.cache import CachingToolsProvider
from tooldeck.providers.policy import PolicyConfig
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

pytestmark = pytest.mark.anyio

RAN: list[str] = []


@tool(annotations=ToolAnnotations(read_only=True), source_id="tool:prices:v1", tags=("prices",))
def price(symbol: str) -> dict[str, Any]:
    """A price."""
    RAN.append(f"price {symbol}")
    return {"symbol": symbol, "price": 10.0 + len(RAN), "as_of": "2026-11-26T10:00:00Z"}


@tool
def set_price(symbol: str, value: float) -> dict[str, Any]:
    """Change a price."""
    RAN.append(f"set {symbol}")
    return {"symbol": symbol, "price": value}


@tool
def note(text: str) -> str:
    """Write a note (changes no price)."""
    RAN.append("note")
    return "ok"


def runtime() -> Any:
    RAN.clear()
    rt = build_runtime(
        load_settings(
            builtin={"enabled": False},
            policy={
                "tools": {
                    "price": {"cache_ttl_s": 60},
                    "set_price": {"invalidates": ["tag:prices"]},
                    "note": {"invalidates": []},
                }
            },
        )
    )
    for made in (price, set_price, note):
        rt.registry.register(made)
    return rt


async def test_a_result_is_reused_per_caller_until_a_write_ends_it() -> None:
    rt = runtime()
    try:
        view = rt.view(None)
        ana, bob = rt.context(user="ana"), rt.context(user="bob")
        first = await view.execute("price", {"symbol": "AAPL"}, ana)
        again = await view.execute("price", '{"symbol":"AAPL"}', ana)  # same call, as text
        assert RAN == ["price AAPL"]
        assert again.data == first.data and again.as_of == first.as_of
        assert (
            again.metadata.attempts == 0 and again.metadata.request_id != first.metadata.request_id
        )
        await view.execute("price", {"symbol": "AAPL"}, bob)  # another caller: its own
        await view.execute("price", {"symbol": "MSFT"}, ana)  # other arguments
        assert RAN == ["price AAPL", "price AAPL", "price MSFT"]

        await view.execute("note", {"text": "hi"}, ana)  # declares it changes nothing
        await view.execute("price", {"symbol": "AAPL"}, ana)
        assert RAN[-1] == "note"
        refused = await view.execute("set_price", {"symbol": "AAPL"}, ana)  # never ran
        assert refused.error is not None and refused.error.type == "validation"
        await view.execute("price", {"symbol": "AAPL"}, ana)
        assert RAN[-1] == "note"
        await view.execute("set_price", {"symbol": "AAPL", "value": 99}, ana)  # tag:prices
        await view.execute("price", {"symbol": "AAPL"}, ana)
        assert RAN[-2:] == ["set AAPL", "price AAPL"]

        assert rt.audit is not None
        rt.audit.flush()
        reused = [r for r in rt.audit.query(limit=50) if r.tool_name == "price" and r.attempts == 0]
        assert len(reused) == 3 and all(r.status == "success" for r in reused)
        app = create_app(rt)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            metrics = client.get("/metrics").text
        assert "tooldeck_cache_hits_total 3.0" in metrics
        assert "tooldeck_cache_misses_total 4.0" in metrics
    finally:
        await rt.aclose()


async def test_entries_expire_and_a_write_without_a_declaration_ends_them_all() -> None:
    now = [0.0]
    RAN.clear()
    config = PolicyConfig(tools={"price": {"cache_ttl_s": 30}})  # type: ignore[dict-item]
    cached = CachingToolsProvider(ToolRegistry([price, set_price]), config, clock=lambda: now[0])
    await cached.execute("price", {"symbol": "A"})
    now[0] = 29.0
    await cached.execute("price", {"symbol": "A"})
    now[0] = 31.0
    await cached.execute("price", {"symbol": "A"})
    assert RAN == ["price A", "price A"]
    await cached.execute("price", {"symbol": "B"})
    await cached.execute("set_price", {"symbol": "Z", "value": 1})  # no invalidates: all end
    await cached.execute("price", {"symbol": "A"})
    await cached.execute("price", {"symbol": "B"})
    assert RAN[-2:] == ["price A", "price B"]
    stats = cached.stats
    assert (stats.hits, stats.misses, stats.invalidated) == (1, 5, 2)
    assert 0 < stats.hit_rate < 1
    small = CachingToolsProvider(ToolRegistry([price]), config, max_entry_chars=10)
    RAN.clear()
    await small.execute("price", {"symbol": "A"})
    await small.execute("price", {"symbol": "A"})
    assert RAN == ["price A", "price A"]  # too long to keep: run each time


async def test_a_read_under_way_when_a_write_lands_is_not_kept() -> None:
    import asyncio

    from tooldeck.core import tool as make_tool

    gate = asyncio.Event()
    reads: list[str] = []

    @make_tool(annotations=ToolAnnotations(read_only=True))
    async def slow_price(symbol: str) -> int:
        """A price read slowly."""
        reads.append(symbol)
        await gate.wait()
        return len(reads)

    config = PolicyConfig(tools={"slow_price": {"cache_ttl_s": 60}})  # type: ignore[dict-item]
    cached = CachingToolsProvider(ToolRegistry([slow_price, set_price]), config)
    pending = asyncio.create_task(cached.execute("slow_price", {"symbol": "A"}))
    await asyncio.sleep(0.01)  # the read has started
    await cached.execute("set_price", {"symbol": "A", "value": 1})  # a write lands
    gate.set()
    await pending
    await cached.execute("slow_price", {"symbol": "A"})
    assert reads == ["A", "A"]  # the first read's result was not kept
