"""Example data never answers for the user (issue 54): through ``tooldeck chat`` and REST.

A project whose ``tooldeck.toml`` configures only the user's own statements (real OFX
files from beancount_reds_importers' test data) asks about "my" money; no answer may
state a figure of the brokerage pack's shipped demo portfolio, and its tools are not
served. Asked for explicitly (``[brokerage] enabled = true``), every answer from it says it is
example data.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from deadlines import scaled
from integration.processes import Server, env_for, free_port, tooldeck
from tooldeck.packs.brokerage import DEFAULT_DATA_PATH

REDS = Path(__file__).parents[1] / "data/real/beancount_reds_importers"
REDS = next(REDS.glob("beancount_reds_importers-*")) / "beancount_reds_importers"
STATEMENTS = (REDS / "importers/ally/tests/transactions.qfx", REDS / "example/OfxDownload.qfx")
QUESTIONS = (
    "What is my account balance?",
    "How much are my investments worth?",
    "What was my largest expense?",
    "how is my AAPL doing?",
)


def example_figures() -> set[str]:
    """Every money figure of the demo portfolio as an answer would write it ($1,234.56),
    its accounts' total value and cash, and each account's and position's."""
    data = json.loads(DEFAULT_DATA_PATH.read_text())
    numbers: set[float] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, float) and abs(node) >= 100:
            numbers.add(abs(node))

    walk(data)
    accounts = data["account_summary"]["accounts"]
    numbers.add(round(sum(a["total_value"] for a in accounts), 2))
    numbers.add(round(sum(a["total_cash"] for a in accounts), 2))
    return {f"{n:,.2f}" for n in numbers}


def stated(text: str, figures: set[str]) -> set[str]:
    return {f for f in figures if re.search(rf"(?<![\d,.]){re.escape(f)}(?!\d)", text)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "finances"
    folder.mkdir()
    for statement in STATEMENTS:
        shutil.copy(statement, folder / statement.name)
    names = ", ".join(f'"{s.name}"' for s in STATEMENTS)
    (folder / "tooldeck.toml").write_text(f"[context.finance]\nofx = [{names}]\n")
    return folder


def test_the_chat_never_states_a_demo_figure_as_the_users(project: Path, tmp_path: Path) -> None:
    figures = example_figures()
    assert "128,963.20" in figures  # the demo accounts' total value
    env = env_for(tmp_path / "data")
    listed = tooldeck("tools", cwd=project, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "get_account_summary" not in listed.stdout and "user_context" in listed.stdout
    for question in QUESTIONS:
        done = tooldeck("chat", question, cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        assert not stated(done.stdout, figures), (question, done.stdout)
        assert "get_positions" not in done.stdout and "get_account_summary" not in done.stdout
        if question == "What is my account balance?":  # the statements' own: LEDGERBAL, INVBAL
            assert "$150.65" in done.stdout and "$6,543.21" in done.stdout, done.stdout
    env["TOOLDECK_BROKERAGE__ENABLED"] = "true"  # asked for explicitly
    asked = tooldeck("chat", "What is my account balance?", cwd=project, env=env)
    assert asked.returncode == 0, asked.stderr
    assert stated(asked.stdout, figures) and "Example data" in asked.stdout, asked.stdout


def test_rest_runs_never_state_a_demo_figure_as_the_users(project: Path, tmp_path: Path) -> None:
    figures = example_figures()
    server = Server(tmp_path / "data", free_port(), cwd=project)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            names = [t["name"] for t in client.get("/api/tools").json()]
            assert "get_positions" not in names and "user_context" in names
            answered = client.post(
                "/api/tools/execute/get_account_summary", json={}
            )  # the demo's tools are not there to call either
            assert answered.status_code == 404, answered.text
            for question in QUESTIONS:
                started = client.post("/api/chat", json={"question": question})
                assert started.status_code in (200, 202), started.text
                run_id = started.json()["run_id"]
                deadline = time.monotonic() + scaled(60)
                run = client.get(f"/api/runs/{run_id}").json()
                while run["state"] not in ("completed", "failed") and time.monotonic() < deadline:
                    time.sleep(0.1)
                    run = client.get(f"/api/runs/{run_id}").json()
                assert run["state"] == "completed", run
                answer = run["answer"]
                assert not stated(answer["answer_markdown"], figures), (question, answer)
                sources = {call["source_id"] for call in answer["tool_calls"]}
                assert not sources & {"tool:account_summary:v1", "tool:positions:v1"}, sources
    finally:
        server.stop()
