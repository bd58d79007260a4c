"""``tooldeck chat``: the answer, its citations and grounding, and the tool-call table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tooldeck.cli.app import app
from tooldeck.packs.brokerage import DEFAULT_DATA_PATH

runner = CliRunner()
AAPL = "How much is my AAPL position worth and how is it doing?"


def test_the_aapl_question_in_a_real_process_is_grounded_in_the_data_file() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tooldeck", "chat", AAPL],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(DEFAULT_DATA_PATH.read_text())
    price = next(q["price"] for q in data["quotes"]["quotes"] if q["symbol"] == "AAPL")
    for p in (p for p in data["positions"]["positions"] if p["symbol"] == "AAPL"):
        assert f"{p['quantity']} shares worth ${p['quantity'] * price:,.2f}" in done.stdout
    assert "Citations: tool:positions:v1, tool:quotes:v1" in done.stdout
    assert "Grounding: grounded" in done.stdout
    table = done.stdout[done.stdout.index("Tool calls (router)") :]
    assert "get_positions" in table and "get_quotes" in table and "success" in table


def test_json_output_is_the_run() -> None:
    result = runner.invoke(app, ["chat", "What's my cash balance in the joint account?", "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.output)
    assert run["state"] == "completed" and run["user"] is None  # the local user
    assert run["answer"]["params"] == {"account": "joint"}
    assert "$8,420.00" in run["answer"]["answer_markdown"]


def test_a_clarifying_question_shows_its_options_and_is_answered_with_param() -> None:
    asked = runner.invoke(app, ["chat", "How did my portfolio perform?"])
    assert asked.exit_code == 0, asked.output
    assert "Over which period?" in asked.output
    assert "Options (radio): 1D, 1W, 1M, 3M, YTD, 1Y, ALL" in asked.output
    assert "--param timeframe=<option>" in asked.output
    answered = runner.invoke(
        app, ["chat", "How did my portfolio perform?", "--param", "timeframe=YTD"]
    )
    assert answered.exit_code == 0 and "Performance over YTD" in answered.output
    assert "Grounding: grounded" in answered.output


def test_confirmation_is_denied_without_a_terminal_and_approved_with_yes(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text('[profiles.careful]\nconfirm = ["get_quotes"]\n')
    args = ["chat", "Quote for NVDA", "--profile", "careful", "--config", str(config)]
    denied = runner.invoke(app, args)
    assert denied.exit_code == 0, denied.output
    assert "no terminal to confirm (pass --yes to approve)" in denied.output
    approved = runner.invoke(app, [*args, "--yes"])
    assert approved.exit_code == 0 and "$146.75" in approved.output
    unknown = runner.invoke(app, ["chat", "cash?", "--profile", "nobody"])
    assert unknown.exit_code == 2 and "unknown profile 'nobody'" in unknown.output


def test_bad_input_names_the_argument() -> None:
    empty = runner.invoke(app, ["chat", ""])
    assert empty.exit_code == 2 and "Invalid value for QUESTION" in empty.output
    assert "at least 1 character" in empty.output
    pair = runner.invoke(app, ["chat", "perf", "--param", "foo"])
    assert (
        pair.exit_code == 2 and "Invalid value for --param: 'foo' is not key=value" in pair.output
    )


def test_a_dead_model_endpoint_fails_the_run_with_its_error(tmp_path: Path) -> None:
    config = tmp_path / "tooldeck.toml"
    config.write_text('[agent]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\ntimeout_s = 5\n')
    dead = runner.invoke(app, ["chat", "What is my cash?", "--config", str(config)])
    assert dead.exit_code == 1
    assert "run failed: model endpoint: APIConnectionError" in dead.output
