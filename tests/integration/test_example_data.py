"""Example data never answers for the user (issue 54): through ``tooldeck chat`` and REST.

A project whose ``tooldeck.toml`` configures only the user's own statements (real OFX
files from beancount_reds_importers' test data) asks about "my" money; no answer may
state a figure of the brokerage pack's shipped demo portfolio, and its tools are not
served. Asked for explicitly (``[brokerage] enabled = true``), every answer from it says it is
example data. A project whose own data is documents (a real page of Flask's manual,
from Debian's ``python-flask-doc``), added before or while a server runs, is asked
whether to search them or answer from the example instead.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from data.real_files import real_files
from deadlines import scaled
from integration.processes import Server, env_for, free_port, tooldeck
from tooldeck.core.intents import EXAMPLE_CHOICE
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


def answered(client: httpx.Client, question: str, params: dict[str, str] | None = None) -> dict:
    """The answer of a chat run started over REST, waited for."""
    started = client.post("/api/chat", json={"question": question, "params": params or {}})
    assert started.status_code in (200, 202), started.text
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + scaled(60)
    run = client.get(f"/api/runs/{run_id}").json()
    while run["state"] not in ("completed", "failed") and time.monotonic() < deadline:
        time.sleep(0.1)
        run = client.get(f"/api/runs/{run_id}").json()
    assert run["state"] == "completed", run
    return dict(run["answer"])


def flask_page() -> Path:
    return next(p for p in real_files("html") if p.name == "quickstart.html")


def test_documents_of_the_users_own_keep_the_demo_from_answering(tmp_path: Path) -> None:
    """``tooldeck docs add`` in a project with nothing else configured: the demo's figures
    are not stated as the user's; the user is asked, and each choice is answered."""
    figures = example_figures()
    project = tmp_path / "manuals"
    project.mkdir()
    (project / "tooldeck.toml").write_text("")
    env = env_for(tmp_path / "data")
    added = tooldeck("docs", "add", str(flask_page()), cwd=project, env=env)
    assert added.returncode == 0, added.stderr
    for question in QUESTIONS:
        done = tooldeck("chat", question, cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        assert not stated(done.stdout, figures), (question, done.stdout)
    asked = tooldeck("chat", QUESTIONS[0], cwd=project, env=env)
    assert "Only example data here would answer that" in asked.stdout, asked.stdout
    assert "Options (radio): documents, account_value" in asked.stdout, asked.stdout
    chosen = tooldeck("chat", QUESTIONS[0], "--param", "intent=account_value", cwd=project, env=env)
    assert stated(chosen.stdout, figures) and "Example data" in chosen.stdout, chosen.stdout
    manual = tooldeck("chat", "How do I enable debug mode?", cwd=project, env=env)
    assert "use the --debug option" in " ".join(manual.stdout.split()), manual.stdout


def test_documents_uploaded_while_serving_keep_the_demo_from_answering(tmp_path: Path) -> None:
    """The same, over REST, with the documents uploaded after the server started."""
    figures = example_figures()
    project = tmp_path / "manuals"
    project.mkdir()
    (project / "tooldeck.toml").write_text("")
    server = Server(tmp_path / "data", free_port(), cwd=project)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            before = answered(client, QUESTIONS[0])  # nothing of the user's yet: the demo
            assert stated(before["answer_markdown"], figures), before
            assert "Example data" in before["answer_markdown"], before
            page = flask_page()
            sent = {
                "name": page.name,
                "content_base64": base64.b64encode(page.read_bytes()).decode(),
            }
            uploaded = client.post("/api/documents/upload", json=sent)
            assert uploaded.status_code in (200, 201), uploaded.text
            for question in QUESTIONS:
                answer = answered(client, question)
                assert not stated(answer["answer_markdown"], figures), (question, answer)
                assert answer["needs_clarification"], answer
            ask = answered(client, QUESTIONS[0])["clarifying_question"]
            assert ask["question"] == EXAMPLE_CHOICE and ask["options"][0] == "documents"
            searched = answered(client, QUESTIONS[0], {"intent": "documents"})
            assert not stated(searched["answer_markdown"], figures), searched
    finally:
        server.stop()


def test_rest_runs_never_state_a_demo_figure_as_the_users(project: Path, tmp_path: Path) -> None:
    figures = example_figures()
    server = Server(tmp_path / "data", free_port(), cwd=project)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            names = [t["name"] for t in client.get("/api/tools").json()]
            assert "get_positions" not in names and "user_context" in names
            called = client.post(
                "/api/tools/execute/get_account_summary", json={}
            )  # the demo's tools are not there to call either
            assert called.status_code == 404, called.text
            for question in QUESTIONS:
                answer = answered(client, question)
                assert not stated(answer["answer_markdown"], figures), (question, answer)
                sources = {call["source_id"] for call in answer["tool_calls"]}
                assert not sources & {"tool:account_summary:v1", "tool:positions:v1"}, sources
    finally:
        server.stop()
