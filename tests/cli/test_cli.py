from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deadlines import scaled
from tooldeck.cli.app import app

runner = CliRunner()


def test_tools_table_and_formats() -> None:
    table = runner.invoke(app, ["tools"])
    assert table.exit_code == 0 and "get_positions" in table.output
    for fmt in ("json", "openai", "openai-responses", "anthropic", "gemini", "mcp"):
        result = runner.invoke(app, ["tools", "--format", fmt])
        assert result.exit_code == 0, result.output
        assert (
            len(json.loads(result.output)) == 26
        )  # 8 brokerage + 9 built-in + 5 knowledge + 1 context
    bad = runner.invoke(app, ["tools", "--format", "yaml"])
    assert bad.exit_code == 2 and "unknown format 'yaml'" in bad.output


def test_tools_found_by_words() -> None:
    found = runner.invoke(app, ["tools", "-q", "run a shell command", "--limit", "2", "-f", "json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)[0]["name"] == "shell"
    exported = runner.invoke(app, ["tools", "-q", "stock quote", "--limit", "1", "-f", "openai"])
    assert [t["function"]["name"] for t in json.loads(exported.output)] == ["get_quotes"]


def test_call_with_pairs_and_json_and_exit_codes() -> None:
    ok = runner.invoke(app, ["call", "get_positions", "symbol=AAPL", "account=joint"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.output)
    assert (
        body["source_id"] == "tool:positions:v1" and body["data"]["positions"][0]["quantity"] == 18
    )
    as_json = runner.invoke(app, ["call", "get_quotes", "--args", '{"symbols": ["VOO", "BND"]}'])
    assert [q["symbol"] for q in json.loads(as_json.output)["data"]["quotes"]] == ["VOO", "BND"]
    listed = runner.invoke(app, ["call", "get_quotes", 'symbols=["TLT"]'])
    assert json.loads(listed.output)["data"]["quotes"][0]["symbol"] == "TLT"
    failed = runner.invoke(app, ["call", "get_positions", "symbol=ZZZ"])
    assert failed.exit_code == 1 and json.loads(failed.output)["error"]["type"] == "validation"
    unknown = runner.invoke(app, ["call", "get_position"])  # a usage error: short, exit 2
    assert unknown.exit_code == 2 and "Did you mean 'get_positions'" in unknown.output
    assert len(unknown.output.splitlines()) <= 3
    malformed = runner.invoke(app, ["call", "get_quotes", "symbol"])
    assert malformed.exit_code == 2 and "is not key=value" in malformed.output


def test_audit_lists_calls_made_by_call() -> None:
    runner.invoke(app, ["call", "get_quotes", "symbol=AAPL"])
    runner.invoke(app, ["call", "get_quotes", "symbol=NOPE"])
    table = runner.invoke(app, ["audit"])
    assert table.exit_code == 0 and "get_quotes" in table.output
    lines = runner.invoke(app, ["audit", "--json", "--status", "error"]).output.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["arguments"] == {"symbol": "NOPE"}
    assert runner.invoke(app, ["audit", "--status", "maybe"]).exit_code == 2


def test_audit_reads_at_80_columns() -> None:
    runner.invoke(app, ["call", "get_quotes", "symbol=NOPE"])
    runner.invoke(app, ["call", "shell", "command=ls"])  # no terminal to confirm it
    table = runner.invoke(app, ["audit"], env={"COLUMNS": "80"}).output
    assert max(len(line) for line in table.splitlines()) <= 80
    for word in ("get_quotes", "shell", "confirmation_required", "validation"):
        assert word in table, table  # whole words, not one character per line


def test_bad_config_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["tools", "--config", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    bad = tmp_path / "bad.toml"
    bad.write_text('[server]\nport = "high"\n')
    invalid = runner.invoke(app, ["tools", "--config", str(bad)])
    assert invalid.exit_code == 2 and "server.port" in invalid.output
    broken = tmp_path / "broken.toml"
    broken.write_text("[server\n")
    assert runner.invoke(app, ["tools", "--config", str(broken)]).exit_code == 2


def test_missing_data_file_fails_fast_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text(f'[brokerage]\ndata_path = "{tmp_path / "gone.json"}"\n')
    result = runner.invoke(app, ["tools", "--config", str(config)])
    assert result.exit_code == 2 and "gone.json" in result.output


def test_serve_rejects_a_bad_port_before_binding() -> None:
    result = runner.invoke(app, ["serve", "--port", "70000"])
    assert result.exit_code == 2 and "server.port" in result.output


def test_any_text_renders_as_written() -> None:
    """Tool arguments, descriptions and source ids are never Rich markup or emoji codes."""
    runner.invoke(app, ["call", "get_facts", "topic=[/x] [bold]b :shell:"])
    table = runner.invoke(app, ["audit", "--limit", "1"], env={"COLUMNS": "300"})
    assert table.exit_code == 0, table.output
    assert "[/x] [bold]b :shell:" in table.output
    tools = runner.invoke(app, ["tools"], env={"COLUMNS": "300"})
    assert "tool:shell:v1" in tools.output
    helped = runner.invoke(app, ["chat", "--help"], env={"COLUMNS": "300"})
    assert "[agent]" in helped.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("tooldeck ")


def test_init_into_a_place_it_cannot_write_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = runner.invoke(app, ["init", str(blocker / "project")])
    assert result.exit_code == 2
    assert "cannot write" in result.output and str(blocker) in result.output


def test_init_beside_a_tools_py_of_ones_own_adds_only_what_is_missing(tmp_path: Path) -> None:
    """Issue 55, item 3: init refused a folder with a tools.py, and --force overwrote it."""
    mine = "from tooldeck import tool\n\n\n@tool\ndef shout(text: str) -> str:\n" \
        '    """Shout it.\n\n    Args:\n        text: What to shout.\n    """\n' \
        "    return text.upper()\n"  # fmt: skip
    (tmp_path / "tools.py").write_text(mine)
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tools.py").read_text() == mine  # the user's, untouched
    assert "kept" in result.output and (tmp_path / "tooldeck.toml").is_file()
    config = (tmp_path / "tooldeck.toml").read_text()
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0  # again: nothing lost
    assert (tmp_path / "tooldeck.toml").read_text() == config
    called = runner.invoke(
        app, ["call", "shout", "text=hi", "--config", str(tmp_path / "tooldeck.toml")]
    )
    assert called.exit_code == 0 and "HI" in called.output, called.output


def test_serve_on_a_port_in_use_says_so_before_starting() -> None:
    import socket
    import time

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        start = time.perf_counter()
        result = runner.invoke(app, ["serve", "--port", str(port)])
        elapsed = time.perf_counter() - start
    assert result.exit_code == 2, result.output
    assert f"port {port} on 127.0.0.1 cannot be used" in result.output
    assert f"try --port {port + 1}" in result.output
    assert "UI:" not in result.output and elapsed < scaled(5)  # no pack was loaded first


def test_key_value_pairs_are_read_as_the_tool_schema_wants(tmp_path: Path) -> None:
    (tmp_path / "books.py").write_text(
        "from tooldeck import tool\n\n\n"
        "@tool\n"
        "def find_book(isbn: str, copies: int = 1, note: str | None = None) -> dict:\n"
        '    """Find a book by ISBN."""\n'
        '    return {"isbn": isbn, "copies": copies, "note": note}\n'
    )
    result = runner.invoke(
        app,
        ["call", "find_book", "isbn=9780134685991", "copies=3", "note=true",
         "--tools", str(tmp_path / "books.py")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)["data"]
    assert data == {"isbn": "9780134685991", "copies": 3, "note": "true"}


def test_your_own_tools_are_served_alone_and_with_adds_a_pack(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(
        "from tooldeck import tool\n\n\n@tool\ndef word_count(text: str) -> int:\n"
        '    """Count words."""\n    return len(text.split())\n'
    )
    own = ["tools", "-f", "json", "--tools", str(tmp_path / "tools.py")]
    alone = runner.invoke(app, own)
    assert alone.exit_code == 0, alone.output
    assert [t["name"] for t in json.loads(alone.stdout)] == ["word_count"]
    with_math = runner.invoke(app, [*own, "--with", "builtin"])
    names = [t["name"] for t in json.loads(with_math.stdout)]
    assert "word_count" in names and "python" in names and "get_positions" not in names
    typo = runner.invoke(app, [*own, "--with", "builtins"])
    assert typo.exit_code == 2 and "did you mean 'builtin'" in typo.output
    bare = runner.invoke(app, ["tools", "-f", "json"])  # nothing named: the demo as before
    assert "get_positions" in [t["name"] for t in json.loads(bare.stdout)]


def test_config_show_says_a_key_is_unset_and_hides_one_that_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unset = json.loads(runner.invoke(app, ["config", "show", "--json"]).stdout)
    assert unset["server.api_key"]["value"] is None  # nothing to hide: say so
    monkeypatch.setenv("TOOLDECK_SERVER__API_KEY", "sk-abcdefghijklmnopqrstuvwx")
    shown = runner.invoke(app, ["config", "show", "--json"]).stdout
    assert json.loads(shown)["server.api_key"]["value"] == "***"
    assert "sk-abcdefghijklmnopqrstuvwx" not in shown


def test_help_and_option_errors_do_not_load_the_runtime() -> None:
    """``tooldeck --help`` answers from Typer, Rich and the core alone (0.27 s, was 0.76 s).

    The runtime, the settings (every pack's models), the agent and SQLAlchemy load when
    a command runs; an import added at the top of a ``cli`` module would bring them back.
    """
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from tooldeck.cli.app import app\n"
        "try:\n"
        "    app(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('sqlalchemy', 'tooldeck.runtime', 'tooldeck.config', 'tooldeck.agent',\n"
        "         'tooldeck.observability.audit', 'tooldeck.packs.knowledge.store',\n"
        "         'tooldeck.packs.knowledge.pack', 'rich.markdown')\n"
        "print('LOADED', [m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "LOADED []" in done.stdout, done.stdout[-500:]


def test_credentials_are_stored_from_stdin_listed_without_values_and_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLDECK_CREDENTIALS__USE_KEYRING", "false")  # never the OS's
    secret = "sk-cli-9c8b7a6f5e4d3c2b1a"
    stored = runner.invoke(app, ["credentials", "set", "module:weather", "-u", "ada"], input=secret)
    assert stored.exit_code == 0, stored.output
    listed = runner.invoke(app, ["credentials", "list", "-u", "ada"])
    assert "module:weather" in listed.output and secret not in listed.output
    assert "module:weather" not in runner.invoke(app, ["credentials", "list", "-u", "bob"]).output
    data = tmp_path / "data"
    assert secret.encode() not in (data / "credentials.db").read_bytes()
    assert (data / "credentials.key").stat().st_mode & 0o777 == 0o600
    empty = runner.invoke(app, ["credentials", "set", "module:weather"], input="")
    assert empty.exit_code == 2 and "no secret given" in empty.output
    assert (
        runner.invoke(app, ["credentials", "delete", "module:weather", "-u", "ada"]).exit_code == 0
    )
    again = runner.invoke(app, ["credentials", "delete", "module:weather", "-u", "ada"])
    assert again.exit_code == 1 and "no credential" in again.output
