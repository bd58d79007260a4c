"""The benchmarks still run: each quick form exits 0 and prints its table.

Speed is not asserted here (benchmarks print figures; tests check behaviour); this
keeps a script from breaking unnoticed when an interface it uses changes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "prints"),
    [
        ("overhead.py", "(b)  ToolRegistry.execute"),
        ("providers.py", "stack / bare"),
        ("approvals.py", ""),
        ("peers.py", "tooldeck stack, defaults (audit ack)"),
        ("modules.py", "reload_pack after one install"),
        ("statements.py", "one process per file"),
        ("receipts.py", "keyed, repeat"),
        ("temporal_runs.py", "ms added per call"),
        ("replicas.py", "| run event | NOTIFY |"),
        ("scale.py", "| 2 replicas, PostgreSQL | send |"),
        (
            "faults.py",
            "| approvals-restart | 3 | 6 | 6 | 0 | run completed 3; denied calls that ran: 0 |",
        ),
    ],
)
def test_a_benchmark_runs_in_its_quick_form(script: str, prints: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert prints in done.stdout
