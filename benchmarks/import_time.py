"""How long ``import tooldeck`` takes, and what it loads.

    .venv/bin/python benchmarks/import_time.py [--runs N]

Each run is a fresh interpreter (``python -c "import tooldeck"``), so nothing is cached
in memory; the figure is the median wall time of the import alone, measured inside
the process, against the interpreter's own start-up. Target: ≤ 300 ms, with none of
the heavy optional parts (SQLAlchemy, OpenTelemetry, FastAPI, the MCP SDK, Rich).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = ("sqlalchemy", "opentelemetry", "fastapi", "mcp", "uvicorn", "rich", "typer", "jsonschema")

PROBE = f"""
import json, sys, time
start = time.perf_counter()
import tooldeck
took = (time.perf_counter() - start) * 1000
print(json.dumps({{"ms": took, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    samples, loaded = [], set()
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
        result = json.loads(out.stdout)
        samples.append(result["ms"])
        loaded.update(result["loaded"])
    median = statistics.median(samples)
    print(f"import tooldeck: median {median:.0f} ms of {runs} runs (min {min(samples):.0f} ms)")
    print(f"heavy modules loaded: {', '.join(sorted(loaded)) or 'none'}")
    print(f"target ≤ 300 ms: {'met' if median <= 300 else 'MISSED'}")


if __name__ == "__main__":
    main()
