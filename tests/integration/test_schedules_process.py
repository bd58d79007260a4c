"""Schedules in real processes: ``tooldeck serve`` runs a schedule another process added,
and after a restart makes up the fire it missed while it was down (issue 31, part 5)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from processes import Server, env_for, free_port, tooldeck

from deadlines import wait_until

TICK_TOOL = '''
from pathlib import Path

from tooldeck import tool


@tool
def tick(label: str) -> int:
    """Append a line to ticks.txt.

    Args:
        label: The line.
    """
    path = Path(__file__).parent / "ticks.txt"
    with path.open("a") as out:
        out.write(label + "\\n")
    return len(path.read_text().splitlines())
'''


def ticks(folder: Path) -> list[str]:
    path = folder / "ticks.txt"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.integration
def test_the_server_runs_a_schedule_the_cli_added_and_makes_up_a_missed_fire(
    tmp_path: Path,
) -> None:
    (tmp_path / "tools.py").write_text(TICK_TOOL)
    (tmp_path / "tooldeck.toml").write_text(
        'tools = ["./tools.py"]\n[schedules]\nenabled = true\nmin_interval_s = 1\npoll_s = 0.2\n'
        "grace_s = 1\n"
    )
    env = env_for(None)
    server = Server(None, free_port(), cwd=tmp_path)
    try:
        added = tooldeck(
            "schedule", "add", "beat", "--tool", "tick", "--args", '{"label": "beat"}',
            "--every", "2s", "--yes", cwd=tmp_path, env=env,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        assert "scheduled beat: every 2s" in added.stderr
        assert "no scheduler of this project runs" not in added.stderr  # the server does
        wait_until(lambda: len(ticks(tmp_path)) >= 2, "two fires in the server", 30)
        listed = httpx.get(f"{server.url}/api/schedules", timeout=10).json()
        assert listed[0]["name"] == "beat" and listed[0]["runs"] >= 2
        assert listed[0]["last_status"] == "success"
    finally:
        assert server.stop() == 0
    stopped = len(ticks(tmp_path))
    time.sleep(5)  # two or three fires missed while nothing runs
    assert len(ticks(tmp_path)) == stopped
    alone = tooldeck(
        "schedule", "add", "later", "--tool", "tick", "--args", '{"label": "later"}',
        "--every", "1h", "--yes", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr
    said = " ".join(alone.stderr.split())
    assert "no scheduler of this project runs now: later fires once `tooldeck serve`" in said
    again = Server(None, free_port(), cwd=tmp_path)
    try:
        wait_until(lambda: len(ticks(tmp_path)) > stopped, "the missed fire made up", 30)
        info = next(
            s
            for s in httpx.get(f"{again.url}/api/schedules", timeout=10).json()
            if s["name"] == "beat"
        )
        assert info["missed"] >= 1  # "once": the missed fires ran as one
    finally:
        assert again.stop() == 0
    history = tooldeck("schedule", "list", "--json", cwd=tmp_path, env=env)
    assert '"name": "beat"' in history.stdout
