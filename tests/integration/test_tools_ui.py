"""The tools UI in Debian's Chromium (Playwright), and one call per entry point seen everywhere.

A real ``tooldeck serve`` process exports spans over OTLP/HTTP to a receiver on
127.0.0.1. Screenshots of each page go to ``test-artifacts/`` (or
``$TOOLDECK_TEST_ARTIFACTS``). Without ``/usr/bin/chromium`` the browser tests are
skipped, or fail when ``TOOLDECK_REQUIRE_BROWSER=1`` (CI sets it; ``make test``
installs Chromium where apt-get can run).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser import ARTIFACTS, launch_chromium
from mcp import Client
from otlp_receiver import OTLPReceiver
from processes import Server, env_for, everything_server, free_port
from prometheus_client.parser import text_string_to_metric_families

from deadlines import wait_until

pytestmark = pytest.mark.integration


CONTEXT_DATA = Path(__file__).resolve().parents[1] / "packs" / "context_data"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OTLPReceiver]:
    r = OTLPReceiver()
    yield r
    r.close()


def tracing_env(receiver: OTLPReceiver) -> dict[str, str]:
    return {
        "TOOLDECK_TRACING__EXPORTER": "otlp",
        "TOOLDECK_TRACING__ENDPOINT": f"{receiver.url}/v1/traces",
        "TOOLDECK_TRACING__SCHEDULE_DELAY_MS": "50",
    }


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui") / "data"


@pytest.fixture(scope="module")
def server(data_dir: Path, receiver: OTLPReceiver) -> Iterator[Server]:
    s = Server(data_dir, free_port(), env=tracing_env(receiver))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launch_chromium() as chromium:
        yield chromium


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(  # what the page's Content-Security-Policy refused: the UI must not need it
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def eventually(check: Callable[[], bool], timeout_s: float = 30.0) -> None:
    wait_until(check, str(check), timeout_s)


def test_find_run_and_see_provenance_then_a_validation_error(
    server: Server, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server.url}/tools")
    page.get_by_placeholder("Search tools…").fill("positions")
    expect(page.locator('a[data-tool="get_quotes"]')).to_have_count(0)  # filtered out
    shot(page, "tools-index")
    page.locator('a[data-tool="get_positions"]').click()
    expect(page.locator("h1")).to_contain_text("get_positions")
    page.fill("#f-symbol", "AAPL")
    page.click("#run")
    expect(page.locator("#result-status")).to_have_text("success")
    expect(page.locator("#provenance")).to_contain_text("tool:positions:v1")
    expect(page.locator("#provenance")).to_contain_text("2026-11-20")
    # "Copy as curl" and "Copy as CLI" give commands that make the same call
    page.click("#copy-curl")
    page.click("#copy-cli")
    curl = page.get_attribute("#copy-curl", "data-copied") or ""
    cli = page.get_attribute("#copy-cli", "data-copied") or ""
    answered = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=30)
    assert json.loads(answered.stdout)["data"]["symbol"] == "AAPL", curl
    assert cli == 'tooldeck call get_positions --args \'{"symbol":"AAPL"}\''
    called = subprocess.run(
        ["bash", "-c", cli],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env_for(tmp_path), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    assert json.loads(called.stdout)["source_id"] == "tool:positions:v1", called.stderr
    expect(page.locator("table.data")).to_contain_text("individual")  # records render as a table
    shot(page, "tool-success")

    page.get_by_role("button", name="Raw JSON").click()
    expect(page.locator("#raw-json")).to_have_value('{\n  "symbol": "AAPL"\n}')
    page.fill("#raw-json", '{"symbol": 42}')
    page.click("#run")
    expect(page.locator("#result-status")).to_have_text("error")
    expect(page.locator("#error-type")).to_contain_text("validation")
    expect(page.locator("#error-message")).to_contain_text("symbol")
    shot(page, "tool-validation-error")

    page.goto(f"{server.url}/tools/history?tool=get_positions")
    rows = page.locator("#history tr.clickable")
    expect(rows).to_have_count(3)  # the form's call, the copied curl's, the invalid one
    expect(rows.first).to_contain_text("error")
    rows.first.focus()  # from the keyboard: Enter opens a row
    page.keyboard.press("Enter")
    expect(rows.first).to_have_attribute("aria-expanded", "true")
    rows.first.click()  # and closes it again
    rows.nth(1).click()
    expect(page.get_by_role("button", name="Re-run")).to_be_visible()
    shot(page, "history")
    page.get_by_role("button", name="Re-run").click()
    expect(page.locator("#f-symbol")).to_have_value("AAPL")  # the form is filled from the record

    held = httpx.post(f"{server.url}/api/tools/execute/shell", json={"command": "echo chart"})
    assert held.status_code == 409  # waits for a person: counted, not as a failure
    page.goto(f"{server.url}/tools/metrics?since=1h")
    expect(page.locator("#metrics")).to_contain_text("get_positions")
    chart = page.locator("#metrics-chart")
    expect(chart.locator("canvas")).to_be_visible()  # uPlot, from the package's own files
    expect(chart.locator(".u-axis").first).to_be_visible()
    expect(chart.locator(".u-legend")).to_contain_text("p95 ms")
    shell = page.locator('#metrics tr[data-key="shell"]')
    shell.locator("td").first.click(position={"x": 60, "y": 5})  # beside the history link
    expect(page.locator("#chart-title")).to_contain_text("shell")
    cells = shell.locator("td")
    assert cells.nth(2).inner_text() == "0" and int(cells.nth(4).inner_text()) >= 1, (
        shell.inner_text()  # failures 0; waiting ≥ 1
    )
    shot(page, "metrics")
    approval = held.json()["error"]["details"]["approval_id"]
    assert httpx.post(f"{server.url}/api/approvals/{approval}/deny", json={}).status_code == 200


def test_profile_selector_greys_out_hidden_tools(
    tmp_path: Path, browser: Any, receiver: OTLPReceiver
) -> None:
    from playwright.sync_api import expect

    config = tmp_path / "tooldeck.toml"
    config.write_text('[profiles.support]\ntools = ["get_quotes"]\nconfirm = ["get_quotes"]\n')
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{server.url}/tools")
        page.select_option("#profile", "support")
        expect(page.locator('a[data-tool="get_positions"]')).to_have_class("tool-link hidden-tool")
        expect(page.locator('a[data-tool="get_quotes"]')).to_contain_text("confirm")
        shot(page, "tools-profile-support")
    finally:
        context.close()
        server.stop()


def test_a_pending_confirmation_is_approved_in_the_ui_and_the_call_completes(
    server: Server, page: Any
) -> None:
    from playwright.sync_api import expect

    held = httpx.post(
        f"{server.url}/api/tools/execute/shell",
        json={"command": "echo approved-from-ui"},
        headers={"x-user": "bob"},  # not trusted by default: the caller stays anonymous
    )
    assert held.status_code == 409
    approval_id = held.json()["error"]["details"]["approval_id"]
    page.goto(f"{server.url}/tools/approvals")
    card = page.locator(f'[data-approval="{approval_id}"]')
    expect(card).to_contain_text("anonymous")
    expect(page.locator("#pending-count")).to_have_text("1")
    shot(page, "approvals")
    card.get_by_role("button", name="Approve & run").click()
    expect(card.locator("#result-status")).to_have_text("success")
    expect(card).to_contain_text("approved-from-ui")
    assert httpx.get(f"{server.url}/api/approvals").json() == []
    records = httpx.get(f"{server.url}/api/audit", params={"tool": "shell"}).json()["records"]
    asked = {"command": "echo approved-from-ui"}
    this = [
        r
        for r in records
        if httpx.get(f"{server.url}/api/audit/{r['id']}").json()["arguments"] == asked
    ]
    assert [(r["status"], r["user"]) for r in this] == [("success", None), ("error", None)]


def mcp_call(url: str, tool: str) -> bool:
    """Call ``tool`` with the MCP SDK client in a thread of its own (Playwright owns this one's loop)."""

    async def call() -> bool:
        async with Client(f"{url}/mcp") as client:
            return not (await client.call_tool(tool, {})).is_error

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result(timeout=60)


def test_each_entry_point_appears_once_in_history_metrics_and_traces(
    server: Server, page: Any, data_dir: Path, receiver: OTLPReceiver
) -> None:
    from playwright.sync_api import expect

    rest = httpx.post(f"{server.url}/api/tools/execute/get_account_summary", json={})
    assert rest.status_code == 200
    cli = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "get_quotes", "symbol=NVDA"],
        env={**env_for(data_dir), **tracing_env(receiver)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert mcp_call(server.url, "get_activity")
    page.goto(f"{server.url}/tools/t/get_positions_list")
    page.click("#run")
    expect(page.locator("#result-status")).to_have_text("success")

    channels = {
        "get_account_summary": "rest",
        "get_quotes": "cli",
        "get_activity": "mcp",
        "get_positions_list": "ui",
    }
    metrics = {
        s.labels["tool"]: s.value
        for family in text_string_to_metric_families(httpx.get(f"{server.url}/metrics").text)
        for s in family.samples
        if s.name == "tooldeck_tool_calls_total" and s.labels["tool"] in channels
    }
    assert metrics == dict.fromkeys(
        channels, 1.0
    )  # the CLI's call too: totals live in the database
    for tool in channels:
        history = httpx.get(f"{server.url}/api/audit", params={"tool": tool}).json()["records"]
        assert len(history) == 1, (tool, history)
        eventually(lambda tool=tool: len(receiver.tool_spans(tool)) >= 1)
    time.sleep(0.3)  # a duplicate would arrive with the same batch delay
    for tool in channels:
        (span,) = receiver.tool_spans(tool)
        assert span["name"] == f"execute_tool {tool}"
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["resource"]["service.name"] == "tooldeck"
    assert (
        json.loads(cli.stdout)["source_id"]
        == receiver.tool_spans("get_quotes")[0]["attributes"]["tooldeck.source_id"]
    )


def test_a_phone_sees_every_page_without_sideways_scrolling(
    server: Server, browser: Any, tmp_path: Path
) -> None:
    """390×844 (a phone): no horizontal scroll on any page, and Run is clickable."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    held = httpx.post(f"{server.url}/api/tools/execute/shell", json={"command": "echo phone"})
    assert held.status_code == 409  # a pending approval, for the Approvals page
    try:
        page.goto(f"{server.url}/tools/t/get_positions")
        page.fill("#f-symbol", "AAPL")
        page.click("#run")  # not intercepted by the sidebar
        expect(page.locator("#result-status")).to_have_text("success")
        page.goto(f"{server.url}/tools/t/python")  # `result` in the description is code
        expect(page.locator(".help code", has_text="result").first).to_be_visible()
        for path in (
            "/tools/t/get_positions",
            "/tools",
            "/tools/chat",
            "/tools/documents",
            "/tools/sources",
            "/tools/history",
            "/tools/metrics",
            "/tools/approvals",
        ):
            page.goto(f"{server.url}{path}")
            page.wait_for_load_state("networkidle")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{path} is {width} px wide at 390 px"
            shot(page, "mobile" + path.replace("/", "-"))
        page.goto(f"{server.url}/tools/history")
        status = page.locator("#history tbody tr").first.locator("td").nth(2)
        expect(status).to_be_in_viewport()  # not scrolled off to the right
        assert refused == [], refused  # every page works under its Content-Security-Policy
    finally:
        context.close()


def test_a_ranking_answer_is_a_table_and_a_waiting_call_is_a_question(
    server: Server, page: Any
) -> None:
    """Markdown tables in chat answers; confirmation shown as a question; did-you-mean."""
    from playwright.sync_api import expect

    page.goto(f"{server.url}/tools/chat")
    page.fill("#question", "Which of my positions gained the most?")
    page.click("#ask")
    answer = page.locator(".run").first.locator("#answer")
    expect(answer.locator("table.md tbody tr")).to_have_count(5)
    expect(answer.locator("table.md th.num").last).to_have_text("P/L %")
    expect(answer.locator("table.md tbody tr").first).to_contain_text("NVDA")
    assert "|---" not in answer.inner_text()  # no raw pipes left
    # each figure is bound (answer.claims): highlighted, its source and formula on hover
    first_pl = answer.locator("table.md tbody tr").first.locator("td").nth(3).locator(".claim")
    expect(first_pl).to_have_attribute("data-source", "tool:positions_list:v1")
    title = first_pl.get_attribute("data-tip") or ""
    assert title.startswith("tool:positions_list:v1 = difference(product(") and (
        "tool:quotes:v1#/quotes/" in title
    ), title
    symbol = answer.locator("table.md tbody tr").first.locator("td").first.locator(".claim")
    expect(symbol).to_have_attribute(
        "data-tip", re.compile(r"^tool:positions_list:v1 /positions/\d+/symbol$")
    )
    first_pl.hover()
    shot(page, "chat-claim-hover")

    page.goto(f"{server.url}/tools/t/shell")
    page.fill("#f-command", "echo asked")
    page.click("#run")
    expect(page.locator("#result-status")).to_have_text("needs your approval")
    expect(page.locator(".confirm-box")).to_contain_text("Run shell with these arguments?")
    expect(page.locator(".error-box")).to_have_count(0)  # a question, not a red failure
    shot(page, "tool-needs-approval")

    page.goto(f"{server.url}/tools/t/get_positons")
    suggestion = page.locator("#no-tool").get_by_role("link", name="get_positions", exact=True)
    expect(suggestion).to_be_visible()
    suggestion.click()
    expect(page.locator("#f-symbol")).to_be_visible()


@pytest.fixture
def careful(tmp_path: Path) -> Iterator[Server]:
    """A server whose profile ``careful`` asks before every ``get_quotes``."""
    config = tmp_path / "tooldeck.toml"
    config.write_text('[profiles.careful]\nconfirm = ["get_quotes"]\n')
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    yield server
    server.stop()


def test_chat_streams_an_answer_asks_back_and_waits_for_approval(
    careful: Server, page: Any
) -> None:
    """The Chat page: a clarifying question, a call approved in the chat, one on Approvals."""
    from playwright.sync_api import expect

    page.goto(f"{careful.url}/tools/chat")
    page.select_option("#profile", "careful")
    page.fill("#question", "How did my portfolio perform?")
    page.click("#ask")
    clarify = page.locator("form.clarify")
    expect(clarify).to_contain_text("YTD")
    clarify.get_by_label("YTD").check()
    clarify.get_by_role("button", name="Answer").click()
    latest = page.locator(".run").first
    expect(latest.locator("#run-state")).to_have_text("completed")
    expect(latest.locator("#grounding")).to_have_text("grounded")
    expect(latest.locator("#citations")).to_contain_text("tool:performance:v1")
    expect(latest.locator("#run-calls")).to_contain_text("get_performance")

    page.fill("#question", "What is AAPL trading at?")
    page.click("#ask")
    latest = page.locator(".run").first
    expect(latest.locator("#pending")).to_contain_text("get_quotes")
    expect(page.locator("#pending-count")).to_have_text("1")
    shot(page, "chat-waiting")
    latest.get_by_role("button", name="Approve").click()
    expect(latest.locator("#run-state")).to_have_text("completed")
    expect(latest.locator("#grounding")).to_have_text("grounded")
    expect(latest.locator("#citations")).to_contain_text("tool:quotes:v1")
    expect(latest.locator("#answer")).to_contain_text("AAPL")
    expect(latest.locator("#run-calls tbody tr")).to_contain_text("success")
    shot(page, "chat-answered")

    # a run waiting while nobody has the chat open: decided on the Approvals page
    page.fill("#question", "Quote for TSLA")
    page.click("#ask")
    expect(page.locator(".run").first.locator("#pending")).to_be_visible()
    page.click('a[data-nav="approvals"]')
    card = page.locator("[data-run]")
    expect(card).to_contain_text("Quote for TSLA")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("The run is completed.")
    runs = httpx.get(f"{careful.url}/api/runs").json()
    assert [r["state"] for r in runs][:3] == ["completed"] * 3
    assert runs[0]["answer"]["citations"] == ["tool:quotes:v1"]


def test_a_run_and_an_mcp_session_open_as_a_waterfall(careful: Server, page: Any) -> None:
    """The run view: calls placed in time, the approval waited on, the grounded answer."""
    from playwright.sync_api import expect

    page.goto(f"{careful.url}/tools/chat")
    page.select_option("#profile", "careful")
    page.fill("#question", "How much is my AAPL position worth?")
    page.click("#ask")
    latest = page.locator(".run").first
    latest.get_by_role("button", name="Approve").click()
    expect(latest.locator("#run-state")).to_have_text("completed")
    latest.locator("#run-view").click()  # from the chat to the run's view

    waterfall = page.locator("#waterfall")
    expect(page.locator("#run-state")).to_have_text("completed")
    expect(waterfall.locator("tbody tr[data-call]")).to_have_count(3)  # 2 calls, 1 wait
    expect(waterfall).to_contain_text("approval")
    expect(waterfall).to_contain_text("tool:quotes:v1")
    widths = waterfall.locator(".bar").evaluate_all("bars => bars.map(b => b.style.width)")
    assert all(w.endswith("%") for w in widths), widths
    expect(page.locator("#run-outcome #grounding")).to_have_text("grounded")
    waterfall.locator("tbody tr", has_text="get_positions").first.click()
    expect(waterfall).to_contain_text('"symbol": "AAPL"')  # its audit record
    shot(page, "run-view")

    page.goto(f"{careful.url}/tools/history")
    page.locator("#history a.group-link", has_text="run").first.click()
    expect(page.locator("#waterfall")).to_contain_text("get_positions")

    async def session_calls() -> None:  # a 2025-11-25 client: one connection
        async with Client(f"{careful.url}/mcp", mode="legacy") as client:
            for symbol in ("AAPL", "MSFT"):
                await client.call_tool("get_positions", {"symbol": symbol})

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, session_calls()).result(timeout=60)
    page.goto(f"{careful.url}/tools/history")
    page.locator("#history a.group-link", has_text="session").first.click()
    expect(page.locator("#waterfall tbody tr[data-call]")).to_have_count(2)


def pdf_with_image(title: str) -> bytes:
    """A real one-page PDF (matplotlib) with a sentence and a picture (an image XObject)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.backends.backend_pdf import PdfPages

    buffer = io.BytesIO()
    with PdfPages(buffer, metadata={"Title": title, "Author": "Ada Lovelace"}) as pdf:
        figure = plt.figure()
        figure.text(0.05, 0.9, "Expense ratios are annual fees charged by funds.", fontsize=8)
        axes = figure.add_axes((0.2, 0.1, 0.6, 0.6))
        axes.imshow(np.arange(64 * 64).reshape(64, 64) % 97, interpolation="nearest")
        pdf.savefig(figure)
        plt.close(figure)
    return buffer.getvalue()


def test_documents_are_uploaded_searched_and_opened_with_their_images(
    server: Server, page: Any, tmp_path: Path
) -> None:
    """The Documents page: upload (a bad file says why, the rest goes on), the list,
    search with the matched words marked, a document's blocks with its image served."""
    from playwright.sync_api import expect

    good = tmp_path / "fees.pdf"
    good.write_bytes(pdf_with_image("Fund fees"))
    bad = tmp_path / "notes.txt"
    bad.write_bytes(b"\x7fELF\x02\x01\x00\x00binary")
    page.goto(f"{server.url}/tools/documents")
    page.set_input_files("#upload input[type=file]", [str(good), str(bad)])
    page.click("#upload button")
    expect(page.locator("#upload-note")).to_contain_text("fees.pdf: added (doc:")
    expect(page.locator("#upload-note")).to_contain_text("notes.txt: notes.txt is binary, not text")
    expect(page.locator("#documents")).to_contain_text("Fund fees")
    page.fill("#search input", "expense ratios")
    page.click("#search button")
    expect(page.locator("#search-results mark").first).to_have_text("Expense")
    expect(page.locator("#search-results")).to_contain_text("page 1")
    page.locator("#documents a", has_text="Fund fees").click()
    image = page.locator("#document img.doc-image")
    expect(image).to_have_count(1)
    eventually(lambda: page.evaluate("document.querySelector('#document img').naturalWidth") > 0)
    shot(page, "documents")
    src = image.get_attribute("src") or ""
    served = httpx.get(f"{server.url}{src}")
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"
    page.set_input_files("#upload input[type=file]", [str(good)])
    page.click("#upload button")
    expect(page.locator("#upload-note")).to_contain_text("fees.pdf: unchanged")


def test_the_sources_page_shows_each_source_and_its_last_fetch(tmp_path: Path, page: Any) -> None:
    from playwright.sync_api import expect

    todo = tmp_path / "todo.txt"
    todo.write_text("(A) Call the bank due:2026-11-20\nx Done already\n")
    config = tmp_path / "tooldeck.toml"
    config.write_text(
        f'[context.tasks]\ntodo_txt = "{todo}"\n\n'
        f"[context.weather]\nlatitude = 40.7\nlongitude = -74.0\n"
        f'base_url = "http://127.0.0.1:{free_port()}"\n'  # nothing listens there
    )
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    try:
        page.goto(f"{server.url}/tools/sources")
        tasks = page.locator('tr[data-source="context:tasks:todo.txt"]')
        expect(tasks).to_contain_text("not yet")
        page.click("#refresh-sources")
        expect(tasks).to_contain_text("ok")
        expect(tasks).to_contain_text("2")  # records
        weather = page.locator('tr[data-source="context:weather:open-meteo"]')
        expect(weather).to_contain_text("error")
        expect(weather).to_contain_text("Open-Meteo cannot be reached")
        page.select_option("#upload-category", "calendar")  # a file of my own
        page.set_input_files("#upload-file", str(CONTEXT_DATA / "calendar.ics"))
        page.click("#upload-source button")
        expect(page.locator("#sources-note")).to_contain_text("Uploaded calendar.ics")
        expect(page.locator('tr[data-upload="calendar/calendar.ics"]')).to_be_visible()
        expect(page.locator('tr[data-source="context:calendar:ical"]')).to_be_visible()
        shot(page, "sources")
        page.locator('tr[data-upload="calendar/calendar.ics"] button').click()
        expect(page.locator('tr[data-source="context:calendar:ical"]')).to_have_count(0)
    finally:
        server.stop()


def test_the_modules_page_shows_versions_drafts_and_each_validation_check(
    tmp_path: Path, page: Any
) -> None:
    from playwright.sync_api import expect

    config = tmp_path / "tooldeck.toml"
    config.write_text("[packs.modules]\nadmin = true\n")
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    files = {
        "module.toml": 'name = "greet"\ndescription = "Greets"\n',
        "tools.py": "from pydantic import Field\n\nfrom tooldeck import tool\n\n\n@tool\n"
        'def greet(name: str = Field(examples=["Ada"])) -> str:\n'
        '    """Say hello."""\n    return f"Hello, {name}"\n',
    }
    try:

        def admin(**arguments: Any) -> Any:
            answer = httpx.post(
                f"{server.url}/api/tools/execute/module_admin", json=arguments, timeout=120
            )
            assert answer.status_code == 200, answer.text
            return answer.json()["data"]

        draft = admin(action="create_draft", module_id="greet", files=files)["draft_id"]
        assert admin(action="validate_draft", module_id="greet", draft_id=draft)["passed"]
        page.goto(f"{server.url}/tools/modules")
        row = page.locator('tr[data-module="greet"]')
        expect(row).to_contain_text("not installed")
        row.locator("a", has_text=draft).click()
        expect(page.locator('#checks tr[data-check="tool_calls"]')).to_contain_text("passed")
        expect(page.locator('#checks tr[data-check="behaviour"]')).to_contain_text("passed")
        expect(page.locator("#draft-diff")).to_contain_text('+    return f"Hello, {name}"')
        shot(page, "modules")
        # install from the page: it waits for a person, then runs when pressed again
        page.locator("#install-draft").click()
        expect(page.locator("#modules-note")).to_contain_text("promote_draft waits for a person")
        [pending] = httpx.get(f"{server.url}/api/approvals", timeout=10).json()
        decided = httpx.post(
            f"{server.url}/api/approvals/{pending['approval_id']}/approve", json={}, timeout=10
        )
        assert decided.status_code == 200, decided.text
        page.locator("#install-draft").click()
        expect(page.locator("#modules-note")).to_contain_text("is active")
        expect(row.locator("td[data-tools]")).to_have_text("greet")
        expect(row).to_contain_text("Greets")
        assert (
            httpx.post(f"{server.url}/api/tools/execute/greet", json={"name": "Bo"}).json()["data"]
            == "Hello, Bo"
        )
        row.locator("button", has_text="Disable").click()
        expect(page.locator("#modules-note")).to_contain_text("greet disabled")
        expect(row).to_contain_text("disabled")
    finally:
        server.stop()


NESTING_TOOLS = '''
from __future__ import annotations

from pydantic import BaseModel, create_model

from tooldeck import tool


class Failure(BaseModel):
    message: str
    cause: Failure | None = None


@tool
def report(failure: Failure) -> str:
    """Count a failure's causes."""
    causes = 0
    while failure.cause is not None:
        causes, failure = causes + 1, failure.cause
    return f"{causes} causes"


Level = create_model("L12", x=(int, 0))
for n in range(11, -1, -1):  # each level holds the next one twice: 4,096 leaves
    Level = create_model(f"L{n}", left=(Level, None), right=(Level, None))
Tree = Level


@tool
def grow(tree: Tree) -> str:  # type: ignore[valid-type]
    """Take a tree."""
    return "ok"
'''


def test_forms_of_recursive_and_doubling_schemas_stop_unfolding(tmp_path: Path, page: Any) -> None:
    """A recursive model unfolded without end (a stack overflow), a doubling one 4,096 fields."""
    from playwright.sync_api import expect

    tools = tmp_path / "nesting.py"
    tools.write_text(NESTING_TOOLS)
    server = Server(tmp_path / "data", free_port(), extra_args=["--tools", str(tools)])
    try:
        page.goto(f"{server.url}/tools/t/report")
        expect(page.locator("h1")).to_contain_text("report")
        assert page.locator("input[name=message]").count() <= 6  # one per level shown
        expect(page.locator('textarea[name="cause"]')).to_have_count(1)  # the rest as JSON
        page.locator("input[name=message]").first.fill("disk full")
        page.locator('textarea[name="cause"]').fill(
            '{"message": "quota", "cause": {"message": "x"}}'
        )
        page.click("#run")
        expect(page.locator("#result-status")).to_have_text("success")
        expect(page.locator("#result")).to_contain_text("causes")
        page.goto(f"{server.url}/tools/t/grow")
        expect(page.locator("h1")).to_contain_text("grow")
        assert page.locator("section input, section textarea, section select").count() <= 220
        shot(page, "tool-nesting-form")
    finally:
        server.stop()


def test_an_upstream_servers_resources_and_prompts_are_shown_beside_the_tools(
    tmp_path: Path, page: Any
) -> None:
    """npm's ``server-everything`` behind ``tooldeck serve``: REST, then the tools page."""
    from playwright.sync_api import expect

    config = tmp_path / "tooldeck.toml"
    config.write_text(
        f'[mcp_servers.everything]\ncommand = "{everything_server()}"\nargs = ["stdio"]\n'
        "[profiles.none]\nmcp_servers = []\n"
    )
    server = Server(tmp_path / "data", free_port(), extra_args=["--config", str(config)])
    doc = "demo://resource/static/document/architecture.md"
    try:
        listed = httpx.get(f"{server.url}/api/resources", timeout=60).json()
        by_uri = {r["uri"]: r for r in listed["resources"]}
        assert by_uri[doc]["server"] == "everything"
        assert any("{resourceId}" in t["uriTemplate"] for t in listed["templates"])
        read = httpx.get(f"{server.url}/api/resources/read", params={"uri": doc}, timeout=60)
        assert read.status_code == 200 and "Architecture" in read.json()["contents"][0]["text"]
        missing = httpx.get(
            f"{server.url}/api/resources/read", params={"uri": "file:///etc/passwd"}, timeout=60
        )
        assert missing.status_code == 404 and "everything" in missing.json()["detail"]
        prompts = httpx.get(f"{server.url}/api/prompts", timeout=60).json()["prompts"]
        assert {"simple-prompt", "args-prompt"} <= {p["name"] for p in prompts}
        hidden = httpx.get(f"{server.url}/api/resources", params={"profile": "none"}, timeout=60)
        assert hidden.json() == {"resources": [], "templates": []}  # not in that view
        unknown = httpx.get(f"{server.url}/api/prompts", params={"profile": "nope"}, timeout=60)
        assert unknown.status_code == 404 and "none" in unknown.json()["detail"]

        page.goto(f"{server.url}/tools")
        link = page.locator(f'a[data-resource="{doc}"]')
        expect(link).to_contain_text("everything")
        expect(page.locator('#prompts [data-prompt="args-prompt"]')).to_contain_text("city")
        link.click()
        expect(page.locator("#resource .resource-text")).to_contain_text("Architecture")
        shot(page, "resource")
        page.reload()  # the address opens the same resource
        expect(page.locator("#resource h1")).to_be_visible()
        expect(page.locator("#resource .resource-text")).to_contain_text("Architecture")
    finally:
        server.stop()
