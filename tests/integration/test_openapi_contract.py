"""The REST contract is what ``/openapi.json`` says: schemathesis against a real server.

schemathesis (``--checks all``: status codes, content types, response schemas, valid
data accepted, invalid data rejected, stateful links) runs against ``tooldeck serve``
on 127.0.0.1 with a fixed seed; ``TOOLDECK_SCHEMATHESIS_EXAMPLES`` (default 10) sets
the examples per operation. ``schemathesis.toml`` beside this file says why the tool
endpoints may answer 422 to a value the schema allows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser import launch_chromium
from processes import Server, free_port

pytestmark = pytest.mark.integration

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = os.environ.get("TOOLDECK_SCHEMATHESIS_EXAMPLES", "10")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("contract") / "data", free_port())
    yield s
    s.stop()


def test_schemathesis_finds_no_failure(server: Server, tmp_path: Path) -> None:
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file", str(CONFIG),
            "run", f"{server.url}/openapi.json",
            "--checks", "all",
            "--max-examples", EXAMPLES,
            "--seed", "1",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,  # its .schemathesis/ cache there, not in the checkout
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_docs_render_with_no_network(server: Server) -> None:
    """Swagger UI comes from the package: the page lists the operations offline."""
    html = httpx.get(f"{server.url}/docs").text
    assert "cdn" not in html.lower()
    with launch_chromium() as chromium:
        page = chromium.new_page()
        page.goto(f"{server.url}/docs")
        page.get_by_text("Execute a tool").first.wait_for(timeout=15_000)
        page.close()
