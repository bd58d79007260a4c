"""A hostile web page in the user's browser cannot run a tool on a local tooldeck server.

Debian's Chromium (Playwright) opens an attacker's page served from another origin on
127.0.0.1, and a page reached through a rebinding name (``--host-resolver-rules`` maps
``rebind.test`` to 127.0.0.1, as DNS rebinding would). The server is a real
``tooldeck serve`` with ``python`` relaxed to run without confirmation, so that the
only thing between the page and code execution is the request guard. The audit log
tells whether the tool ran; a same-origin call made last is the positive control that
shows the log would have shown it.
"""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser import ARTIFACTS, launch_chromium
from processes import Server, free_port, serve_http

from deadlines import wait_until

pytestmark = pytest.mark.integration

ATTACK = """<!doctype html><title>cute cats</title><body><script>
const target = "%(target)s/api/tools/execute/python";
const code = JSON.stringify({code: "result = 'pwned-' + str(__import__('os').getuid())"});
window.outcomes = [];
async function attempt(name, init) {
  try { const r = await fetch(target, init); window.outcomes.push(name + ":" + r.type + ":" + r.status); }
  catch (e) { window.outcomes.push(name + ":blocked"); }
}
(async () => {
  // a "simple request": no preflight, the browser sends it and hides the answer
  await attempt("text-plain", {method: "POST", mode: "no-cors", body: code,
                               headers: {"content-type": "text/plain"}});
  await attempt("form", {method: "POST", mode: "no-cors", body: new URLSearchParams({code}),});
  // JSON needs a CORS preflight the server does not grant
  await attempt("json", {method: "POST", body: code, headers: {"content-type": "application/json"}});
  window.done = true;
  if (location.hash !== "#form") return;
  const form = document.createElement("form");
  form.method = "POST"; form.action = target; form.enctype = "text/plain";
  const field = document.createElement("input");
  field.name = '{"code": "result = 1", "x": "'; field.value = '"}';
  form.appendChild(field); document.body.appendChild(form);
  form.submit();
})();
</script></body>"""


class _AttackPage(http.server.BaseHTTPRequestHandler):
    html = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("attack")
    config = root / "tooldeck.toml"
    config.write_text("[policy.tools.python]\nrequires_confirmation = false\n")
    s = Server(root / "data", free_port(), extra_args=["--config", str(config)])
    yield s
    s.stop()


@pytest.fixture(scope="module")
def attacker(server: Server) -> Iterator[str]:
    handler = type("Handler", (_AttackPage,), {"html": (ATTACK % {"target": server.url}).encode()})
    with serve_http(handler) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launch_chromium("--host-resolver-rules=MAP rebind.test 127.0.0.1") as chromium:
        yield chromium


def python_calls(server: Server) -> list[dict[str, Any]]:
    response = httpx.get(f"{server.url}/api/audit", params={"tool": "python"})
    return response.json()["records"]  # type: ignore[no-any-return]


def test_cross_origin_page_cannot_run_python(server: Server, attacker: str, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        with page.expect_navigation(url=f"{server.url}/**"):  # the form posts to the server
            page.goto(f"{attacker}/#form")
        body = page.content()
        assert "pwned" not in body
        assert "cross-origin request" in body  # the guard's 403 answered the form
        page.screenshot(path=str(ARTIFACTS / "attack-cross-origin.png"))

        # rebinding: a page whose origin is a name pointing at 127.0.0.1
        response = page.goto(f"http://rebind.test:{server.url.rsplit(':', 1)[1]}/tools")
        assert response is not None and response.status == 421

        # positive control, last: the UI's own origin runs the tool, and the log shows it
        page.goto(f"{server.url}/tools")
        status = page.evaluate(
            """async () => (await fetch("/api/tools/execute/python", {method: "POST",
                 headers: {"content-type": "application/json"},
                 body: JSON.stringify({code: "result = 'control'"})})).status"""
        )
        assert status == 200
    finally:
        context.close()
    wait_until(lambda: python_calls(server), "the control call's audit record")
    records = python_calls(server)
    assert [r["status"] for r in records] == ["success"], records  # the control call only


def test_attack_page_fetch_outcomes_are_opaque_or_blocked(
    server: Server, attacker: str, browser: Any, tmp_path: Path
) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(attacker)
        page.wait_for_function("window.outcomes && window.outcomes.length === 3", timeout=10_000)
        outcomes = page.evaluate("window.outcomes")
    finally:
        context.close()
    assert outcomes[0].startswith("text-plain:opaque")  # sent, answer hidden (and refused)
    assert outcomes[1].startswith("form:opaque")
    assert outcomes[2] == "json:blocked"  # the preflight is refused by the guard
