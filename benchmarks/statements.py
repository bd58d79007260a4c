"""Reading many small statements cold, as each CLI call and each ``tooldeck chat`` does.

    .venv/bin/python benchmarks/statements.py [--files 25] [--rounds 7] [--quick]

Issue 55: 25 small statements (116 KB) failed the default 10 s ``timeout_s`` in 6 of 7
CLI calls at load 10, because each file was parsed in a killable process of its own,
one after another, and no parse outlived the process. Measured here, interleaved in
one process, each round with a fresh adapter (a new process's view):

- **one process per file** (before): ``parse_statements`` of one file per child;
- **one batch**: every file in one child (``StatementParses``, nothing kept yet);
- **kept**: another process's parses read back from the data dir.

The files are the real OFX/QFX statements of ``tests/data/real`` (beancount_reds_importers
and csv2ofx test data), taken in order up to ``--files`` (repeated when there are fewer;
a repeat is a copy with its own content, so nothing is shared by content). Median ms;
the machine's load is printed beside. Goal: a cold read of 25 files well inside the
bridge's 10 s at load 10, i.e. ≥ 5× less work than one process per file on a cold read,
and kept parses read in ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tooldeck.core.isolated import IsolatedProcesses, ProcessLimits
from tooldeck.packs.context.finance import OFX_PARSERS
from tooldeck.packs.context.statements import StatementParses, parse_statements

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "data"))
from real_files import real_files

LIMITS = ProcessLimits(timeout_s=60, memory_mb=1024)


def statements(folder: Path, count: int) -> list[Path]:
    """``count`` statement files in ``folder``, each with content of its own."""
    real = real_files("ofx")
    made = []
    for n in range(count):
        source = real[n % len(real)]
        path = folder / f"{n:03d}{source.suffix}"
        path.write_bytes(source.read_bytes() + f"\n<!-- copy {n} -->\n".encode())
        made.append(path)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="5 files, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.files, args.rounds = 5, 1
    pool = IsolatedProcesses(1, OFX_PARSERS)
    times: dict[str, list[float]] = {"one process per file": [], "one batch": [], "kept": []}
    with tempfile.TemporaryDirectory() as tmp:
        paths = statements(Path(tmp), args.files)
        size = sum(p.stat().st_size for p in paths)
        pool.call(parse_statements, [], limits=LIMITS)  # the fork server is up for all
        for round_ in range(args.rounds):
            kept = Path(tmp) / f"kept-{round_}"
            start = time.perf_counter()
            for path in paths:
                pool.call(parse_statements, [path], limits=LIMITS)
            times["one process per file"].append(time.perf_counter() - start)

            start = time.perf_counter()
            first = StatementParses(kept, lambda: pool, LIMITS).read(paths)
            times["one batch"].append(time.perf_counter() - start)
            assert all(isinstance(p, dict) for p in first), first

            start = time.perf_counter()
            again = StatementParses(kept, lambda: pool, LIMITS).read(paths)
            times["kept"].append(time.perf_counter() - start)
            assert again == first
    pool.close()
    load = os.getloadavg()[0]
    print(f"{args.files} statements, {size / 1024:.0f} KB, {args.rounds} rounds, load {load:.2f}")
    medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name, ms in medians.items():
        print(f"  {name:22s} {ms:8.1f} ms")
    ratio = medians["one process per file"] / medians["one batch"]
    print(f"  batch: {ratio:.1f}x less than one process per file "
          f"(goal >= 5: {'met' if ratio >= 5 else 'MISSED'})")  # fmt: skip
    kept_ms = medians["kept"]
    print(f"  kept: {kept_ms:.1f} ms (goal <= 50: {'met' if kept_ms <= 50 else 'MISSED'})")


if __name__ == "__main__":
    main()
