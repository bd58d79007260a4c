from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tooldeck.core import BaseTool, ToolContext, tool
from tooldeck.exceptions import DuplicateToolError, RegistrationError
from tooldeck.providers import ToolRegistry

pytestmark = pytest.mark.anyio


@tool
def get_quote(symbol: str) -> dict[str, Any]:
    """Quote."""
    return {"symbol": symbol}


@tool
def get_quotes(symbols: list[str]) -> list[str]:
    """Quotes."""
    return symbols


def test_duplicate_names_and_aliases_name_both_tools() -> None:
    registry = ToolRegistry([get_quote])
    with pytest.raises(
        DuplicateToolError, match=r"'get_quote' .*already taken by FunctionTool \('get_quote'\)"
    ):
        registry.register(tool(name="get_quote")(lambda: None))
    registry.register(get_quotes, aliases=("quote",))
    with pytest.raises(DuplicateToolError, match="'quote'"):
        registry.register(tool(name="other")(lambda: None), aliases=("quote",))
    registry.register(tool(name="a.b")(lambda: None))
    with pytest.raises(DuplicateToolError, match="'a_b'"):
        registry.register(tool(name="a_b")(lambda: None))


def test_invalid_names_and_objects_are_refused() -> None:
    registry = ToolRegistry()
    with pytest.raises(RegistrationError, match="invalid tool name 'has space'"):
        registry.register(get_quote, name="has space")
    with pytest.raises(RegistrationError, match="not a Tool nor a function"):
        registry.register(42)  # type: ignore[arg-type]


async def test_unknown_tool_is_not_found_with_closest_names() -> None:
    registry = ToolRegistry([get_quote, get_quotes])
    result = await registry.execute("get_quot", {})
    assert result.error is not None and result.error.type == "not_found"
    assert result.error.message == (
        "Unknown tool 'get_quot'. Did you mean 'get_quote', 'get_quotes'? Available: get_quote, get_quotes."
    )
    assert result.error.details == {"closest": ["get_quote", "get_quotes"]}


async def test_aliases_and_plain_functions() -> None:
    def double(x: int) -> int:
        """Double x."""
        return 2 * x

    registry = ToolRegistry()
    registry.register(double, aliases=("twice",))
    assert (await registry.execute("twice", {"x": 4})).data == 8
    assert registry.list_definitions()[0].aliases == ("twice",)
    assert registry.list_definitions()[0].provider == "local"
    assert (await registry.execute("double", {"x": 1})).metadata.provider == "local"


async def test_a_tool_that_breaks_the_contract_still_gives_an_envelope() -> None:
    class Rogue(BaseTool[Any, Any]):
        name = "rogue"
        input_schema = {"type": "object"}

        def execute_internal(self, request: Any, ctx: ToolContext) -> Any:
            return None

        async def execute(self, arguments: Any = None, ctx: ToolContext | None = None) -> Any:
            raise RuntimeError("broken contract")

    result = await ToolRegistry([Rogue()]).execute("rogue", {})
    assert result.error is not None and result.error.type == "execution"
    assert "RuntimeError: broken contract" in result.error.message


def test_execute_sync_keeps_one_loop_per_thread() -> None:
    """What a tool binds to its loop (a client, a subprocess) works from call to call."""
    import threading

    first: dict[str, asyncio.AbstractEventLoop] = {}

    @tool
    async def same_loop(name: str) -> bool:
        """Whether this call runs on the loop of its thread's first call.

        Args:
            name: Unused.
        """
        loop = asyncio.get_running_loop()
        return first.setdefault(threading.current_thread().name, loop) is loop

    registry = ToolRegistry([same_loop])
    assert [registry.execute_sync("same_loop", {"name": "a"}).data for _ in range(3)] == [True] * 3
    other: list[object] = []
    worker = threading.Thread(
        target=lambda: other.append(registry.execute_sync("same_loop", {"name": "b"}).data),
        name="worker",
    )
    worker.start()
    worker.join()
    assert other == [True] and first["worker"] is not first["MainThread"]


def test_execute_sync_outside_and_inside_a_loop() -> None:
    registry = ToolRegistry([get_quote])
    assert registry.execute_sync("get_quote", {"symbol": "A"}).data == {"symbol": "A"}

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="use await execute"):
            registry.execute_sync("get_quote", {"symbol": "A"})

    asyncio.run(inside())


def test_execute_sync_runs_what_a_loop_runs() -> None:
    """Timeouts, sleeps, a thread hop, an unfinished async generator; Ctrl-C leaves it usable."""
    closed: list[str] = []

    async def numbers() -> Any:
        try:
            for n in range(10):
                yield n
        finally:
            await asyncio.sleep(0)
            closed.append("numbers")

    @tool
    async def busy(mode: str) -> int:
        """Work that needs a running loop.

        Args:
            mode: ``work`` or ``interrupt``.
        """
        if mode == "interrupt":
            raise KeyboardInterrupt
        async with asyncio.timeout(1):
            await asyncio.sleep(0.001)
        first: int = await anext(numbers())  # the generator is left after its first item
        return first + await asyncio.to_thread(lambda: 41)

    registry = ToolRegistry([busy])
    assert registry.execute_sync("busy", {"mode": "work"}).data == 41
    with pytest.raises(KeyboardInterrupt):
        registry.execute_sync("busy", {"mode": "interrupt"})
    assert [registry.execute_sync("busy", {"mode": "work"}).data for _ in range(2)] == [41, 41]
    assert closed == ["numbers"] * 3  # the loop's finalizer closed each generator
