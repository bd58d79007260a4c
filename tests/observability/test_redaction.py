"""Secrets never reach the audit log, the runs table, spans or the access log (issue 19).

One case per leak the attack run found; each goes through the real writer (a SQLite
file read back with ``sqlite3``), not just through ``redact``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from tooldeck.core.result import ToolResult
from tooldeck.observability import AuditStore, redact
from tooldeck.observability.redact import redact_text
from tooldeck.observability.runs import RunStore
from tooldeck.server.http import RedactedAccessLog

SECRETS = {
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
    "aws_id": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-1234567890-abcdefghijkl",
    "password": "hunter2-Correct-Horse",
}

CASES = [
    ("inside a longer string", {"note": f"use {SECRETS['openai']} for the call"}, "openai"),
    ("a GitHub token mid-sentence", {"text": f"token {SECRETS['github']} here"}, "github"),
    (
        "an Authorization header",
        {"cmd": f"curl -H 'Authorization: Bearer {SECRETS['bearer']}'"},
        "bearer",
    ),
    ("key pwd", {"pwd": SECRETS["password"]}, "password"),
    ("key auth", {"auth": SECRETS["password"]}, "password"),
    ("key inside a longer name", {"db_password": SECRETS["password"]}, "password"),
    (
        "--password= in a command",
        {"command": f"psql --password={SECRETS['password']} db"},
        "password",
    ),
    ("password= in a command", {"command": f"mysql password={SECRETS['password']}"}, "password"),
    ("an AWS key id under a neutral key", {"value": SECRETS["aws_id"]}, "aws_id"),
    ("a Slack token in a list", {"items": ["a", SECRETS["slack"]]}, "slack"),
    ("shell env with a secret name", {"env": {"API_TOKEN": SECRETS["password"]}}, "password"),
]


@pytest.mark.parametrize("form", ["mapping", "JSON text", "JSON bytes (a REST or MCP body)"])
@pytest.mark.parametrize(("case", "arguments", "secret"), CASES, ids=[c[0] for c in CASES])
def test_arguments_are_redacted_in_the_audit_file(
    tmp_path: Path, case: str, arguments: dict[str, object], secret: str, form: str
) -> None:
    sent = {
        "mapping": arguments,
        "JSON text": json.dumps(arguments),
        "JSON bytes (a REST or MCP body)": json.dumps(arguments).encode(),
    }[form]
    store = AuditStore.sqlite(tmp_path / "audit.db")
    store.record("t", sent, None, ToolResult.ok({"ok": True}))
    store.close()
    assert SECRETS[secret] not in (tmp_path / "audit.db").read_bytes().decode(errors="replace")
    assert SECRETS[secret] not in dump(tmp_path / "audit.db")


def dump(path: Path) -> str:
    """Every row of the database as SQL text."""
    with sqlite3.connect(path) as db:
        return "\n".join(db.iterdump())


def test_error_messages_raw_json_and_result_data_are_redacted(tmp_path: Path) -> None:
    store = AuditStore.sqlite(tmp_path / "audit.db")
    echoed = ToolResult.fail("validation", f"Unknown symbol '{SECRETS['openai'].upper()}'.")
    store.record("get_quotes", {"symbol": SECRETS["openai"]}, None, echoed)
    store.record("t", '{"key": "' + SECRETS["github"], None, ToolResult.fail("validation", "bad"))
    stdout = f"export AWS_ACCESS_KEY_ID={SECRETS['aws_id']}\n"
    store.record("shell", {"command": "env"}, None, ToolResult.ok({"stdout": stdout}))
    store.close()
    text = dump(tmp_path / "audit.db")
    for secret in ("openai", "github", "aws_id"):
        assert SECRETS[secret] not in text and SECRETS[secret].upper() not in text, secret


@pytest.mark.parametrize(
    "question",
    [
        f"my key is {SECRETS['openai']}, what is AAPL worth?",
        f"my password is {SECRETS['password']}, can you log in?",  # issue 53, finding 9
    ],
)
def test_chat_questions_and_events_are_redacted_in_the_runs_table(
    tmp_path: Path, question: str
) -> None:
    from sqlalchemy import create_engine

    from tooldeck.observability.tables import metadata

    engine = create_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    metadata.create_all(engine)
    store = RunStore(engine)
    store.save(
        {"run_id": "r1", "state": "queued", "question": question},
        {"run_id": "r1", "seq": 1, "type": "run.created", "data": {"question": question}},
    )
    engine.dispose()
    stored = dump(tmp_path / "runs.db")
    assert SECRETS["openai"] not in stored and SECRETS["password"] not in stored
    assert redact_text("the token is expired") == "the token is expired"  # a sentence stays


@pytest.mark.parametrize("path_length", [100, 5000])  # remembered, and too long to be
def test_access_log_request_lines_are_redacted(path_length: int) -> None:
    path = f"/api/tools?api_key={SECRETS['password']}&q=".ljust(path_length, "x")
    for _ in range(2):  # the second line's redacted path comes from the filter's memory
        record = logging.LogRecord(
            "uvicorn.access",
            logging.INFO,
            __file__,
            1,
            '%s - "%s %s HTTP/%s" %d',
            ("127.0.0.1:5000", "GET", path, "1.1", 200),
            None,
        )
        assert RedactedAccessLog().filter(record)
        assert SECRETS["password"] not in record.getMessage()
        assert "/api/tools?" in record.getMessage()


def test_ordinary_text_is_left_alone() -> None:
    text = "The author's passage: AAPL rose 2.3% after tokens of goodwill; see auth docs."
    assert redact_text(text) == text
    assert redact({"author": "Ann", "symbol": "AAPL", "keyboard": "us"}) == {
        "author": "Ann",
        "symbol": "AAPL",
        "keyboard": "us",
    }


SHORT_ONES = [
    "xoxb-1-2abc",  # a Slack token shorter than the 16-character run
    "AKCp8jQ3xYz12345",  # Artifactory
    " AP6xxxxxxxxxx ",  # Artifactory
    "Authorization: Bearer abcdefgh",
    "https://user:hunter2@example.com/x",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
    "eyJhbGciOi.eyJzdWIiOi.sig",
]


@pytest.mark.parametrize(
    "text", [*SECRETS.values(), *SHORT_ONES], ids=[*SECRETS, *(s[:12] for s in SHORT_ONES)]
)
def test_the_fast_pre_check_never_misses_what_the_patterns_find(text: str) -> None:
    """``might_contain_secret`` skips the full pattern set only when no pattern can match."""
    from tooldeck.observability.redact import _credentials, might_contain_secret

    for value in (text, f'{{"value": "{text}"}}', f"x {text} y"):
        if _credentials().search(value) is not None:
            assert might_contain_secret(value), value


def test_the_pre_check_was_checked_against_the_installed_patterns() -> None:
    """A detect-secrets with other patterns turns the gate off (safe, slower) and fails here,
    so the gate is reviewed against the new patterns (and ``_GATED`` updated)."""
    import hashlib
    from importlib.metadata import version

    from tooldeck.observability.redact import (
        _GATED,
        _GATED_VERSION,
        _gate_applies,
        _patterns,
        might_contain_secret,
    )

    assert _gate_applies()
    assert not might_contain_secret('{"symbol": "AAPL", "as_of": "2026-11-20"}')
    # the version the gate trusts without importing the plugins has the checked patterns
    digest = hashlib.sha256("\n".join(sorted(set(_patterns()))).encode()).hexdigest()
    assert version("detect-secrets") != _GATED_VERSION or digest == _GATED
