"""Side effects exactly once under injected failures, N rounds each (issue 31, part 3).

    .venv/bin/python benchmarks/faults.py [--rounds 100] [--only NAME] [--quick]

A tool with a real effect (one line appended to ``effects.txt``, then a pause before
it answers: the window where a failure loses the acknowledgement) is called with an
idempotency key; a failure is injected after the effect and before the answer; the
client repeats the call with the same key until it is answered. Counted per key: how
often the effect happened. The claim: **never twice**; a call answered ``success`` had
exactly one effect; a retry that cannot know answers ``in_doubt`` ("may or may not have
taken effect") and runs nothing.

Faults (real processes on 127.0.0.1, each round a new key):

- ``rest-drop``: the client's connection is dropped (a 50 ms read time-out) while the
  tool pauses after its effect; it retries on the same ``tooldeck serve``.
- ``server-kill``: ``tooldeck serve`` is killed with SIGKILL after the effect; the
  client retries on a new server on the same data dir.
- ``mcp-close``: the MCP client's session (``tooldeck mcp`` over stdio, launched from
  ``/`` with a bare PATH, as a desktop client does) goes away mid-call; a new session
  retries with the same ``_meta.idempotencyKey``.
- ``worker-kill``: a ``tooldeck worker`` is killed with SIGKILL mid-activity of a chat
  run on Temporal; another worker finishes the run (its retried activity finds the
  receipt).
- ``replica-kill``: two ``tooldeck serve`` replicas on one PostgreSQL, 8 clients
  calling through both at once; one replica is killed with SIGKILL under that load and
  started again; clients retry on either replica.
- ``approvals-restart``: a chat run on Temporal makes three calls that need approval at
  once; its worker is killed and the server replaced while it waits; the new server
  approves two and denies one (the run's confirm, over REST): the two run, once each,
  and the denied one never.

Prints one row per fault: rounds, keys, effects, keys with two or more effects (must be
0), and how the retries were answered.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from test_exactly_once import project  # noqa: E402  (its send_note tool, in a project)


class Tally:
    """Keys sent, effects seen, and how each retry was answered."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.keys: list[str] = []
        self.denied: list[str] = []
        """Effects a person denied: none may happen."""
        self.answers: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()

    def effects(self) -> list[str]:
        """The effects so far, one key per line of ``effects.txt``."""
        path = self.folder / "effects.txt"
        return path.read_text().splitlines() if path.exists() else []

    def answered(self, outcome: str) -> None:
        """Count how a key's retry was answered."""
        with self.lock:
            self.answers[outcome] += 1

    def failed(self) -> bool:
        """Whether an effect ran twice, or a denied one ran at all."""
        counts = collections.Counter(self.effects())
        return any(counts[k] > 1 for k in self.keys) or any(counts[k] for k in self.denied)

    def row(self, name: str, rounds: int) -> str:
        """The table row of fault ``name``, from the effects file."""
        counts = collections.Counter(self.effects())
        twice = sum(1 for key in self.keys if counts[key] > 1)
        answers = ", ".join(f"{k} {v}" for k, v in sorted(self.answers.items()))
        if self.denied:
            answers += f"; denied calls that ran: {sum(counts[k] for k in self.denied)}"
        return (
            f"| {name} | {rounds} | {len(self.keys)} | {sum(counts[k] for k in self.keys)} | "
            f"{twice} | {answers} |"
        )


def outcome(reply: httpx.Response) -> str | None:
    """``replayed``/``success``/``in_doubt``, or None when the retry must wait (a lease)."""
    data = reply.json()
    if data["status"] == "success":
        return "replayed" if reply.headers.get("Idempotent-Replayed") == "true" else "success"
    details = data["error"].get("details") or {}
    if details.get("receipt") == "in_doubt":
        return "in_doubt"
    if data["error"]["type"] == "unavailable":
        return None
    raise AssertionError(f"unexpected answer: {data}")


def retried(url: str, body: dict[str, Any], key: str) -> str:
    """Repeat the keyed call until it is answered (a receipt's lease may make it wait)."""
    while True:
        reply = httpx.post(url, json=body, headers={"Idempotency-Key": key}, timeout=30)
        answer = outcome(reply)
        if answer is not None:
            return answer
        time.sleep(0.1)


def until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def rest_drop(work: Path, rounds: int) -> Tally:
    from processes import Server, free_port

    project(work)
    tally = Tally(work)
    server = Server(None, free_port(), cwd=work)
    try:
        url = f"{server.url}/api/tools/execute/send_note"
        for n in range(rounds):
            key, body = str(uuid.uuid4()), {"key": f"drop-{n}", "pause_s": 0.1}
            tally.keys.append(f"drop-{n}")
            with contextlib.suppress(httpx.ReadTimeout):
                httpx.post(url, json=body, headers={"Idempotency-Key": key}, timeout=0.05)
            tally.answered(retried(url, body, key))
    finally:
        server.stop()
    return tally


def server_kill(work: Path, rounds: int) -> Tally:
    from processes import Server, free_port

    project(work, "[receipts]\nlease_s = 1.0\n")
    tally = Tally(work)
    for n in range(rounds):
        server = Server(None, free_port(), cwd=work)
        key, body = str(uuid.uuid4()), {"key": f"kill-{n}", "pause_s": 0.05 * (n % 3)}
        tally.keys.append(f"kill-{n}")
        with contextlib.suppress(httpx.ReadTimeout):
            httpx.post(
                f"{server.url}/api/tools/execute/send_note",
                json=body, headers={"Idempotency-Key": key}, timeout=0.02,
            )  # fmt: skip
        until(lambda n=n: f"kill-{n}" in tally.effects(), "the effect")  # type: ignore[misc]
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        server.log.close()
        again = Server(None, free_port(), cwd=work)
        try:
            url = f"{again.url}/api/tools/execute/send_note"
            tally.answered(retried(url, body, key))
        finally:
            again.stop()
    return tally


def mcp_close(work: Path, rounds: int) -> Tally:
    from mcp import Client, StdioServerParameters
    from processes import BIN

    config = project(work)
    tally = Tally(work)
    params = StdioServerParameters(
        command=str(BIN / "tooldeck"),
        args=["mcp", "--config", str(config)],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": str(work)},
    )

    async def rounds_() -> None:
        for n in range(rounds):
            meta = {"idempotencyKey": str(uuid.uuid4())}
            arguments = {"key": f"mcp-{n}", "pause_s": 0.3}
            tally.keys.append(f"mcp-{n}")
            async with Client(params) as client:
                call = asyncio.create_task(client.call_tool("send_note", arguments, meta=meta))
                await asyncio.to_thread(
                    until, lambda n=n: f"mcp-{n}" in tally.effects(), "the effect"
                )  # type: ignore[misc]
                call.cancel()  # the session goes away before the answer
            async with Client(params) as client:
                retry = await client.call_tool("send_note", arguments, meta=meta)
            text = retry.content[0].text if retry.content else ""  # type: ignore[union-attr]
            tally.answered(
                "in_doubt"
                if "may or may not" in text
                else "error"
                if retry.is_error
                else "replayed"
            )

    asyncio.run(rounds_())
    return tally


@contextlib.contextmanager
def on_temporal(work: Path, reply: Callable[[dict[str, Any]], dict[str, Any]]) -> Iterator[Any]:
    """A Temporal dev server, a scripted model answering with ``reply``, a deployment.

    The deployment is the Temporal runs tests' (``send_note`` and ``pay`` in a project,
    its workers, a REST app with no worker of its own); its workers stop at the end.
    """
    from scripted_openai import ScriptedModel
    from test_temporal_runs import Deployment

    from integration.temporal import free_port, temporal_server

    with (
        ScriptedModel([reply]).serve() as model,
        temporal_server(work / "temporal.db", free_port()) as address,
    ):
        deployment = Deployment(work / "project", address, model)
        try:
            yield deployment
        finally:
            deployment.stop()


def worker_kill(work: Path, rounds: int) -> Tally:
    import json

    from test_temporal_runs import finished, reply

    tally = Tally(work / "project")
    with on_temporal(work, reply) as deployment:
        worker = deployment.start_worker()
        with deployment.client() as client:
            for n in range(rounds):
                tally.keys.append(f"kill-{n}")
                started = client.post("/api/chat/stream", json={"question": f"send kill-{n}"})
                run_id = next(
                    json.loads(line.removeprefix("data: "))["run_id"]
                    for line in started.iter_lines()
                    if line.startswith("data: ")
                )
                until(lambda n=n: f"kill-{n}" in tally.effects(), "the effect")  # type: ignore[misc]
                deployment.kill(worker)  # after the effect, before the answer
                worker = deployment.start_worker()
                run = finished(client, run_id)
                (call,) = run["answer"]["tool_calls"]
                if call["status"] == "success":
                    tally.answered("replayed")
                elif "may or may not" in (call.get("error_message") or ""):
                    tally.answered("in_doubt")
                else:
                    tally.answered(f"error {call.get('error_type')}")
    return tally


def replica_kill(work: Path, rounds: int, clients: int = 8) -> Tally:
    from processes import Server, free_port

    from integration.postgres import postgres_server

    tally = Tally(work)
    with postgres_server() as url:
        config = project(work, f'[store]\nurl = "{url}"\n[receipts]\nlease_s = 1.0\n')
        args = ["--config", str(config)]
        servers = [Server(work / f"data-{i}", free_port(), args) for i in range(2)]
        try:
            for n in range(rounds):
                keys = [(f"load-{n}-{c}", str(uuid.uuid4())) for c in range(clients)]
                tally.keys += [name for name, _ in keys]
                urls = [s.url for s in servers]

                def call(name: str, key: str, urls: list[str] = urls) -> None:
                    body = {"key": name, "pause_s": random.uniform(0.0, 0.3)}
                    while True:
                        target = random.choice(urls)
                        try:
                            reply = httpx.post(
                                f"{target}/api/tools/execute/send_note",
                                json=body, headers={"Idempotency-Key": key}, timeout=30,
                            )  # fmt: skip
                            answer = outcome(reply)
                        except (httpx.TransportError, ValueError):
                            answer = None  # the replica went away: try again
                        if answer is not None:
                            tally.answered(answer)
                            return
                        time.sleep(0.1)

                threads = [threading.Thread(target=call, args=key) for key in keys]
                for thread in threads:
                    thread.start()
                time.sleep(random.uniform(0.05, 0.25))  # under load
                victim = servers[n % 2]
                os.kill(victim.proc.pid, signal.SIGKILL)
                victim.proc.wait()
                victim.log.close()
                servers[n % 2] = Server(work / f"data-{n % 2}", free_port(), args)
                urls[n % 2] = servers[n % 2].url  # the clients' list: the new replica
                for thread in threads:
                    thread.join(120)
        finally:
            for server in servers:
                server.stop()
    return tally


def approvals_restart(work: Path, rounds: int) -> Tally:
    """Part 4 on Temporal: three gated calls of one run, every process restarted.

    The run waits on them while its worker is killed and the server replaced; a new
    server approves two and denies one: exactly the two run.
    """
    from scripted_openai import text, tool_calls

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if messages[-1]["role"] == "tool":
            return text("Done.")
        n = messages[-1]["content"].removeprefix("pay round ")
        return tool_calls(
            ("call_a", "pay", {"to": f"ana-{n}", "cents": 100}),
            ("call_b", "pay", {"to": f"bob-{n}", "cents": 200}),
            ("call_c", "pay", {"to": f"mallory-{n}", "cents": 99_900}),
        )

    tally = Tally(work / "project")
    with on_temporal(work, reply) as deployment:
        worker = deployment.start_worker()
        for n in range(rounds):
            tally.keys += [f"pay ana-{n} 100", f"pay bob-{n} 200"]
            tally.denied.append(f"pay mallory-{n} 99900")
            with deployment.client() as client:
                run = client.post("/api/chat", json={"question": f"pay round {n}"}).json()
            deployment.kill(worker)  # every process of the run goes away ...
            worker = deployment.start_worker()
            with deployment.client() as client:  # ... and a new server decides
                run = client.get(f"/api/runs/{run['run_id']}").json()
                while run["state"] == "waiting_input":
                    approve = not run["pending"]["arguments"]["to"].startswith("mallory")
                    run = client.post(
                        f"/api/runs/{run['run_id']}/confirm",
                        json={"approve": approve, "message": None if approve else "no"},
                    ).json()
            tally.answered(f"run {run['state']}")
    return tally


FAULTS: dict[str, Callable[[Path, int], Tally]] = {
    "rest-drop": rest_drop,
    "server-kill": server_kill,
    "mcp-close": mcp_close,
    "worker-kill": worker_kill,
    "replica-kill": replica_kill,
    "approvals-restart": approvals_restart,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--only", choices=sorted(FAULTS), action="append")
    parser.add_argument("--quick", action="store_true", help="3 rounds each")
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    rows, failed = [], False
    for name in options.only or FAULTS:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"tooldeck-faults-{name}-") as folder:
            tally = FAULTS[name](Path(folder), rounds)
            rows.append(tally.row(name, rounds) + f" {time.monotonic() - started:.0f} |")
            failed |= tally.failed()
        print(rows[-1], file=sys.stderr, flush=True)
    print("| fault | rounds | keys | effects | keys with 2+ effects | answers | s |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if failed:
        raise SystemExit("a side effect ran twice")


if __name__ == "__main__":
    main()
