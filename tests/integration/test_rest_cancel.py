"""A REST client that goes away cancels its call (issue 32, part 4).

Before, the tool ran on to its end and the audit said ``success`` for a call nobody
received. A real ``tooldeck serve``; the client's own time-out closes the connection.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from processes import Server, free_port

from deadlines import wait_until

pytestmark = pytest.mark.integration

TOOLS = '''
import asyncio
import time
from pathlib import Path

from tooldeck import tool

HERE = Path(__file__).parent


@tool
async def wait_async(label: str) -> str:
    """Wait a minute.

    Args:
        label: Names the marker files.
    """
    (HERE / f"{label}.started").write_text("yes")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        (HERE / f"{label}.cancelled").write_text("yes")
        raise
    return "done"


@tool
def wait_thread(label: str) -> str:
    """Wait two seconds in a worker thread.

    Args:
        label: Names the marker file.
    """
    (HERE / f"{label}.started").write_text("yes")
    time.sleep(2)
    return "done"
'''


def test_a_client_that_disconnects_cancels_its_call(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "tooldeck.toml").write_text('tools = ["./tools.py"]\n')
    server = Server(None, free_port(), cwd=tmp_path)
    try:
        for tool, label in (("wait_async", "a"), ("wait_thread", "t")):
            url = f"{server.url}/api/tools/execute/{tool}"
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(url, json={"label": label}, timeout=1.0)
            assert (tmp_path / f"{label}.started").exists()
        wait_until(lambda: (tmp_path / "a.cancelled").exists(), "the async tool's cancellation")

        def records() -> dict[str, str | None]:
            rows = httpx.get(f"{server.url}/api/audit", timeout=10).json()["records"]
            return {r["tool_name"]: r["error_type"] for r in rows}

        wait_until(lambda: len(records()) == 2, "both calls in the audit")
        assert records() == {"wait_async": "cancelled", "wait_thread": "cancelled"}
        # a client that waits still gets its answer
        done = httpx.post(f"{server.url}/api/tools/execute/wait_thread", json={"label": "w"})
        assert done.status_code == 200 and done.json()["data"] == "done"
    finally:
        assert server.stop() == 0
    assert "Traceback" not in Path(server.log.name).read_text()
