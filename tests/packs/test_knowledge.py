"""The knowledge pack: real PDF, HTML, Markdown and text files, the store, the tools, the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.packs.knowledge.parse import DocumentError, parse_bytes
from tooldeck.packs.knowledge.store import KnowledgeStore
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio

PAGES = [
    "Rebalancing brings a portfolio back to its target allocation. Drift happens as prices move.",
    "Expense ratios are annual fees charged by funds, such as 0.03 percent for an index fund.",
]

HTML = b"""<!doctype html><html><head><title>Bond basics</title>
<meta name="author" content="Grace Hopper"><meta name="keywords" content="bonds, duration">
<script>var secret = "never indexed";</script></head><body>
<h1>Bonds</h1><p>A bond pays interest until it matures.</p>
<h2>Duration</h2><p>Duration measures how much a bond price moves when rates change.</p>
<figure><img src="/img/yield.png" alt="A yield curve"><figcaption>Yields by maturity</figcaption></figure>
</body></html>"""

MARKDOWN = """# Settlement

Trades settle one business day after the trade date (T+1).

## Cash

Unsettled cash cannot be withdrawn yet.

![Settlement timeline](timeline.png)

```
T+1 settlement
```
"""


def pdf_bytes(encrypt: bool = False) -> bytes:
    """A real two-page PDF with text and metadata (matplotlib's PDF backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    buffer = io.BytesIO()
    meta = {"Title": "Rebalancing guide", "Author": "Ada Lovelace", "Keywords": "rebalance, fees"}
    with PdfPages(buffer, metadata=meta) as pdf:
        for text in PAGES:
            figure = plt.figure()
            figure.text(0.05, 0.5, text, fontsize=6)
            pdf.savefig(figure)
            plt.close(figure)
    data = buffer.getvalue()
    if not encrypt:
        return data
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt("secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_each_format_becomes_blocks_that_know_where_they_come_from() -> None:
    pdf = parse_bytes(pdf_bytes(), "guide.pdf")
    assert (pdf.title, pdf.author, pdf.document_type) == (
        "Rebalancing guide",
        "Ada Lovelace",
        "pdf",
    )
    assert pdf.keywords == ["rebalance", "fees"] and pdf.created
    assert [(b.page_number, b.content_text[:11]) for b in pdf.blocks] == [
        (1, "Rebalancing"),
        (2, "Expense rat"),
    ]
    html = parse_bytes(HTML, "bonds.html")
    assert (html.title, html.author, html.keywords) == (
        "Bond basics",
        "Grace Hopper",
        ["bonds", "duration"],
    )
    texts = [(b.block_type, b.section, b.content_text) for b in html.blocks]
    assert ("text", "Bonds > Duration", texts[3][2]) == texts[3]
    image = next(b for b in html.blocks if b.block_type == "image")
    assert (image.image_url, image.image_caption) == ("/img/yield.png", "A yield curve")
    assert not any("secret" in b.content_text for b in html.blocks)  # scripts are dropped
    md = parse_bytes(MARKDOWN.encode(), "settlement.md")
    assert md.title == "Settlement"
    assert [(b.block_type, b.section) for b in md.blocks] == [
        ("heading", "Settlement"),
        ("text", "Settlement"),
        ("heading", "Settlement > Cash"),
        ("text", "Settlement > Cash"),
        ("image", "Settlement > Cash"),
        ("code", "Settlement > Cash"),
    ]
    text = parse_bytes("Notes\n\nFirst paragraph.\n\nSecond one.".encode("latin-1"), "n.txt")
    assert [b.content_text for b in text.blocks] == ["Notes", "First paragraph.", "Second one."]


@pytest.mark.parametrize(
    ("data", "name", "why"),
    [
        (pdf_bytes(encrypt=True), "locked.pdf", "the PDF is encrypted"),
        (pdf_bytes()[:400], "broken.pdf", "the PDF is corrupt"),
        (b"   \n", "empty.txt", "the file is empty"),
        (b"\x7fELF\x02\x01\x00\x00binary", "notes.txt", "is binary, not text"),
        (b"<html><script>only()</script></html>", "app.html", "no readable text"),
        (b"x" * 2048, "big.txt", "over the 0 MB limit"),
    ],
)
def test_a_document_that_cannot_be_read_says_why(data: bytes, name: str, why: str) -> None:
    with pytest.raises(DocumentError) as caught:
        parse_bytes(data, name, max_bytes=1024 if name == "big.txt" else 50 * 2**20)
    assert why in str(caught.value)


async def test_the_tools_search_list_get_and_store_through_the_runtime(tmp_path: Path) -> None:
    runtime = build_runtime(
        load_settings(data_dir=tmp_path, builtin={"enabled": False}, audit={"enabled": False})
    )
    store = runtime.services.get(KnowledgeStore)
    guide, _ = store.add(parse_bytes(pdf_bytes(), "guide.pdf"), str(tmp_path / "guide.pdf"))
    store.add(parse_bytes(HTML, "bonds.html"), str(tmp_path / "bonds.html"))
    run = runtime.provider.execute
    try:
        found = await run("semantic_search", {"query": "what are expense ratios?", "top_k": 3})
        top = found.data["blocks"][0]
        assert found.data["mode"] == "hybrid" and top["page_number"] == 2
        assert top["source_id"] == f"doc:{guide.document_id}@v1"
        assert top["document_title"] == "Rebalancing guide"
        only_html = await run(
            "semantic_search", {"query": "bond rates", "filters": {"document_type": "html"}}
        )
        assert {b["document_title"] for b in only_html.data["blocks"]} == {"Bond basics"}
        document = await run("get_document", {"document_id": guide.document_id})
        assert document.source_id == guide.source_id and document.as_of == guide.ingested_at
        assert document.data["summary"].startswith("Rebalancing brings")
        listed = await run("list_documents", {"author": "grace hopper"})
        assert [d["title"] for d in listed.data["documents"]] == ["Bond basics"]
        stored = await run(
            "knowledge_store",
            {"text": "The team meets on Thursdays.", "metadata": {"title": "Meetings"}},
        )
        assert stored.data["status"] == "added"
        recalled = await run("knowledge_search", {"query": "when does the team meet"})
        assert recalled.data["blocks"][0]["content_text"] == "The team meets on Thursdays."
        for tool, args, says in [
            ("semantic_search", {"query": ""}, "query"),
            ("semantic_search", {"query": "?!"}, "no words to search for"),
            ("semantic_search", {"query": "bonds", "top_k": 0}, "top_k"),
            ("semantic_search", {"query": "bonds", "top_k": 10_000}, "top_k"),
            (
                "semantic_search",
                {"query": "bonds", "filters": {"authr": "x"}},
                "did you mean 'author'",
            ),
            ("get_document", {"document_id": "nope"}, "Unknown document 'nope'"),
        ]:
            bad = await run(tool, args)
            assert bad.error is not None and bad.error.type == "validation", args
            assert says in bad.error.message, bad.error.message
    finally:
        await runtime.aclose()


def test_docs_cli_adds_a_folder_and_goes_on_past_a_bad_file(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.pdf").write_bytes(pdf_bytes())
    (folder / "bonds.html").write_bytes(HTML)
    (folder / "settlement.md").write_text(MARKDOWN)
    (folder / "locked.pdf").write_bytes(pdf_bytes(encrypt=True))
    env = {**os.environ, "TOOLDECK_DATA_DIR": str(tmp_path / "data")}

    def tooldeck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tooldeck", *args], capture_output=True, text=True, env=env
        )

    added = tooldeck("docs", "add", str(folder), "missing.md")
    assert added.returncode == 1, added.stderr
    assert "encrypted" in added.stderr and "not found: missing.md" in added.stderr
    assert "3 added, 0 updated, 0 unchanged, 2 failed" in added.stderr
    assert re.search(r"; [\d,]+ blocks stored in \d+\.\d s", added.stderr), added.stderr
    again = tooldeck("docs", "add", str(folder / "settlement.md"))
    assert again.returncode == 0 and "1 unchanged" in again.stderr
    listed = [json.loads(line) for line in tooldeck("docs", "list", "--json").stdout.splitlines()]
    assert sorted(d["title"] for d in listed) == ["Bond basics", "Rebalancing guide", "Settlement"]
    found = tooldeck("docs", "search", "when do trades settle", "--limit", "2")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("Settlement") and "T+1" in found.stdout
    as_json = json.loads(tooldeck("docs", "search", "bond duration", "--json").stdout)
    assert as_json["data"]["blocks"][0]["document_title"] == "Bond basics"
    assert tooldeck("docs", "search", "!!!").returncode == 1  # the tool's validation error
    one = listed[0]["document_id"]
    shown = tooldeck("docs", "show", one, "--blocks")
    assert shown.returncode == 0 and listed[0]["title"] in shown.stdout
    assert tooldeck("docs", "rm", one).returncode == 0
    assert tooldeck("docs", "rm", one).returncode == 2


async def test_answers_cite_document_versions_and_quote_them_exactly(tmp_path: Path) -> None:
    """A search result's blocks are citable one document at a time, and quotes must hold."""
    from tooldeck.agent.grounding import check_grounding, find_citations

    runtime = build_runtime(
        load_settings(data_dir=tmp_path, builtin={"enabled": False}, audit={"enabled": False})
    )
    store = runtime.services.get(KnowledgeStore)
    guide, _ = store.add(parse_bytes(pdf_bytes(), "guide.pdf"), str(tmp_path / "guide.pdf"))
    bonds, _ = store.add(parse_bytes(HTML, "bonds.html"), str(tmp_path / "bonds.html"))
    try:
        found = await runtime.provider.execute("semantic_search", {"query": "expense ratio fees"})
        schemas = {d.name: d.output_schema for d in await runtime.provider.definitions()}

        def verdict(text: str) -> list[tuple[str, str]]:
            report = check_grounding(text, find_citations(text), [found], schemas=schemas)
            return [(f.kind, f.text) for f in report.findings]

        g, b = guide.source_id, bonds.source_id
        # issue 29: a number in prose backs only a quotation of that prose, not a paraphrase
        assert verdict(f"Index funds can charge 0.03 percent a year [{g}].") == [
            ("unverifiable_number", "0.03 percent")
        ]
        quoted = f"The guide: “such as 0.03 percent for an index fund” [{g}]."
        assert verdict(quoted) == []
        assert (
            verdict(f"The guide says “Expense ratios are annual fees charged by funds” [{g}].")
            == []
        )
        assert verdict(f"Fees are about 0.05 percent [{g}].") == [
            ("untraced_number", "0.05 percent")
        ]
        assert verdict(f"The guide says “Expense ratios are tiny monthly fees” [{g}].") == [
            ("untraced_quote", "Expense ratios are tiny monthly fees")
        ]
        # the bonds page's blocks were among the results, but the figure is not in them
        assert verdict(f"Index funds can charge 0.03 percent [{b}].") == [
            ("untraced_number", "0.03 percent")
        ]
        assert verdict("Index funds can charge 0.03 percent [doc:000000000000@v1].")[0][0] == (
            "unknown_citation"
        )
    finally:
        await runtime.aclose()


async def test_the_rag_profile_is_seed_001s_toolset_unless_configured(tmp_path: Path) -> None:
    async def names(**settings: object) -> list[str]:
        runtime = build_runtime(load_settings(data_dir=tmp_path, **settings))  # type: ignore[arg-type]
        try:
            await runtime.start()  # every tool a profile names must exist
            return sorted(d.name for d in await runtime.view("rag").definitions())
        finally:
            await runtime.aclose()

    assert await names() == ["get_document", "list_documents", "llm", "python", "semantic_search"]
    without_builtin = await names(builtin={"enabled": False})
    assert without_builtin == ["get_document", "list_documents", "semantic_search"]
    own = await names(profiles={"rag": {"tools": ["semantic_search"]}})
    assert own == ["semantic_search"]


def test_docs_cli_fetches_urls_through_the_address_guard(tmp_path: Path) -> None:
    """A real HTTP server on 127.0.0.1: reachable by the allowed name ``localhost``; a
    redirect from there to ``127.0.0.1`` (a private address not allowed) is refused, as
    is a 500 MB file (sparse: refused before it is read)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/bonds":
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(HTML)
            else:
                self.send_response(302)
                self.send_header("location", f"http://127.0.0.1:{port}/bonds")
                self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(500 * 1024 * 1024)
    (tmp_path / "tooldeck.toml").write_text('[knowledge]\nallow_hosts = ["localhost"]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLDECK_")}
    try:
        added = subprocess.run(
            [sys.executable, "-m", "tooldeck", "docs", "add", f"http://localhost:{port}/bonds",
             f"http://localhost:{port}/elsewhere", str(big)],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert added.returncode == 1, added.stderr
    assert f"added: http://localhost:{port}/bonds" in added.stderr
    assert "127.0.0.1" in added.stderr and "elsewhere" in added.stderr  # the redirect, refused
    assert "524 MB is over the 50 MB limit" in added.stderr
    assert "1 added, 0 updated, 0 unchanged, 2 failed" in added.stderr


def docx_bytes() -> bytes:
    """A real Word file (python-docx): title, headings, a paragraph, a table, a picture."""
    import docx
    from docx.shared import Inches

    png = io.BytesIO()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1, 1))
    figure.savefig(png, format="png")
    plt.close(figure)
    document = docx.Document()
    props = document.core_properties
    props.title, props.author, props.keywords = "Fee schedule", "Ada Lovelace", "fees; funds"
    document.add_heading("Fees", level=1)
    document.add_paragraph("Index funds charge an expense ratio of 0.03 percent a year.")
    document.add_heading("Trading", level=2)
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Trade", (0, 1): "Fee", (1, 0): "Stock", (1, 1): "$0"}.items():
        table.cell(r, c).text = text
    document.add_picture(io.BytesIO(png.getvalue()), width=Inches(1))
    document.inline_shapes[0]._inline.docPr.set("descr", "Fee chart")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_word_document_keeps_its_headings_tables_pictures_and_properties() -> None:
    parsed = parse_bytes(docx_bytes(), "fees.docx")
    assert (parsed.title, parsed.author, parsed.document_type, parsed.keywords) == (
        "Fee schedule",
        "Ada Lovelace",
        "docx",
        ["fees", "funds"],
    )
    assert parsed.created is not None and len(parsed.created) == 10
    assert [(b.block_type, b.section, b.content_text) for b in parsed.blocks[:4]] == [
        ("heading", "Fees", "Fees"),
        ("text", "Fees", "Index funds charge an expense ratio of 0.03 percent a year."),
        ("heading", "Fees > Trading", "Trading"),
        ("table", "Fees > Trading", "Trade | Fee\nStock | $0"),
    ]
    (image,) = [b for b in parsed.blocks if b.block_type == "image"]
    assert (image.image_caption, image.image_media_type) == ("Fee chart", "image/png")
    assert image.image_data is not None and image.image_data.startswith(b"\x89PNG")
    with pytest.raises(DocumentError, match="the DOCX is corrupt"):
        parse_bytes(b"PK\x03\x04 not really a zip", "broken.docx")


def test_the_reranker_puts_the_block_that_says_it_over_its_neighbours() -> None:
    """``store.rerank``: a heading ranked first by the fusion goes below its paragraph;
    the block holding the query's rarer words rises; a query without words keeps the
    fused order; top_k cuts after reordering."""
    from tooldeck.packs.knowledge.store import Hit, rerank

    def hit(n: int, text: str, kind: str = "text") -> Hit:
        block = {"block_id": f"d:{n}", "block_type": kind, "content_text": text,
                 "section": "Uploads > Limits", "document_id": "d"}  # fmt: skip
        return Hit(block, 0.0)

    fused = [
        hit(0, "Limits", kind="heading"),
        hit(1, "Uploaded files are kept in memory when small."),
        hit(2, "Set MAX_CONTENT_LENGTH to limit the size of uploaded files."),
        hit(3, "Files are uploaded with a form."),
    ]
    cosines = {"d:1": 0.40, "d:2": 0.41, "d:3": 0.35}
    order = [h.block["block_id"] for h in rerank("limit size uploaded files", fused, cosines, 4)]
    assert order[0] == "d:2" and order[-1] == "d:0"
    assert [h.block["block_id"] for h in rerank("?!", fused, cosines, 2)] == ["d:0", "d:1"]
    assert len(rerank("limit size", fused, cosines, 1)) == 1
