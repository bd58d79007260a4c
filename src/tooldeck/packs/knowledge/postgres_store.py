"""The shared document store: PostgreSQL with pgvector, by URL, for several processes.

Tables ``knowledge_documents``, ``knowledge_blocks`` and ``knowledge_vectors`` (made on
first use, with ``create extension if not exists vector``). Lexical search is
PostgreSQL's full text search (``english`` configuration, block text weighted over title
and section, ranked by ``ts_rank`` with length normalisation: not BM25, but the same
idea). Dense search is pgvector's cosine distance over an HNSW index, with iterative
scans so that filters do not starve the result. Both fused by reciprocal rank, as in
``SqliteStore``.

Connections come from a ``psycopg_pool`` pool (at most 4), opened on first use. A
password belongs in ``PGPASSWORD`` or ``~/.pgpass`` (libpq reads both), not in the URL.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from tooldeck.exceptions import ToolUnavailableError
from tooldeck.packs.knowledge.embed import Embedder
from tooldeck.packs.knowledge.parse import ParsedDocument
from tooldeck.packs.knowledge.store import (
    BLOCK_FIELDS,
    EVERYONE,
    Document,
    Hit,
    SearchMode,
    Status,
    Viewer,
    block_id_for,
    block_place,
    check_mode,
    document_id_for,
    embed_blocks,
    extractive_summary,
    filter_conditions,
    hybrid,
    image_url,
    query_words,
    strict_then_loose,
    visible,
)

__all__ = ["PostgresStore"]

_SCHEMA = """
create extension if not exists vector;
create table if not exists knowledge_documents(
    document_id text primary key, title text not null, author text, document_type text not null,
    created text, keywords jsonb not null, source text not null, content_hash text not null,
    version integer not null, ingested_at text not null, summary text not null);
alter table knowledge_documents add column if not exists owner text;
create table if not exists knowledge_blocks(
    id bigserial primary key, block_id text unique not null, document_id text not null,
    version integer not null, active boolean not null, position integer not null,
    block_type text not null, content_text text not null, page_number integer,
    section text not null, image_url text, image_caption text, document_title text not null,
    tsv tsvector generated always as (
        setweight(to_tsvector('english', content_text), 'A')
        || setweight(to_tsvector('english', document_title), 'B')
        || setweight(to_tsvector('english', section), 'C')) stored);
create table if not exists knowledge_images(
    block_id text primary key references knowledge_blocks(block_id) on delete cascade,
    media_type text not null, data bytea not null);
create index if not exists knowledge_blocks_document
    on knowledge_blocks(document_id, version);
create index if not exists knowledge_blocks_tsv on knowledge_blocks using gin(tsv) where active;
"""

_VECTORS = """
create table if not exists knowledge_vectors(
    id bigint primary key references knowledge_blocks(id) on delete cascade,
    model text not null, embedding vector({dim}) not null);
create index if not exists knowledge_vectors_hnsw
    on knowledge_vectors using hnsw (embedding vector_cosine_ops);
"""


class PostgresStore:
    """Documents and their blocks in PostgreSQL (pgvector for vectors), shared by URL.

    Args:
        url: ``postgresql://user@host:port/database`` (libpq's URI form).
        embedder: Makes search hybrid; without one it is lexical only. The vector
            column takes the embedder's dimension when the table is made; a store made
            for another dimension is refused when opened.
    """

    def __init__(self, url: str, embedder: Embedder | None = None) -> None:
        self.url = url
        self.embedder = embedder
        self._lock = threading.Lock()
        self._pool: Any = None

    @property
    def where(self) -> str:
        """The URL without its password (for messages)."""
        parts = urlsplit(self.url)
        host = parts.hostname or "localhost"
        user = f"{parts.username}@" if parts.username else ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{user}{host}{port}{parts.path}"

    @property
    def mode(self) -> SearchMode:
        """``hybrid`` with an embedder, else ``lexical``."""
        return "hybrid" if self.embedder is not None else "lexical"

    def _open(self) -> Any:
        """The pool, opened (and the schema made) on first use.

        Raises:
            ToolUnavailableError: the server cannot be reached, or pgvector is missing.
        """
        if self._pool is not None:
            return self._pool
        with self._lock:
            if self._pool is not None:
                return self._pool
            import psycopg
            from psycopg_pool import ConnectionPool

            try:  # one direct connection first: it fails fast and says why
                with psycopg.connect(self.url, connect_timeout=5) as conn, conn.transaction():
                    conn.execute("select pg_advisory_xact_lock(hashtext('tooldeck.knowledge'))")
                    conn.execute(_SCHEMA)
                    if self.embedder is not None:
                        conn.execute(_VECTORS.format(dim=int(self.embedder.dim)))
                        self._check_dimension(conn)
            except psycopg.Error as exc:
                raise ToolUnavailableError(
                    f"the document store at {self.where} cannot be used: "
                    f"{str(exc).strip() or type(exc).__name__}",
                    details={"store": self.where},
                ) from None
            pool = ConnectionPool(
                self.url, min_size=1, max_size=4, open=False, timeout=10,
                kwargs={"connect_timeout": 5},
            )  # fmt: skip
            pool.open()
            self._pool = pool
            return pool

    def _check_dimension(self, conn: Any) -> None:
        assert self.embedder is not None
        row = conn.execute(
            "select format_type(atttypid, atttypmod) from pg_attribute "
            "where attrelid = 'knowledge_vectors'::regclass and attname = 'embedding'"
        ).fetchone()
        wanted = f"vector({int(self.embedder.dim)})"
        if row and row[0] != wanted:
            raise ToolUnavailableError(
                f"the document store at {self.where} holds {row[0]} embeddings, and the "
                f"embedder {self.embedder.model_id} makes {wanted}: use another database, "
                "or drop table knowledge_vectors to embed again",
                retryable=False,
            )

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection in a transaction (committed when the block ends)."""
        import psycopg
        from psycopg.rows import dict_row

        pool = self._open()
        try:
            with pool.connection() as conn, conn.transaction():
                conn.row_factory = dict_row
                yield conn
        except psycopg.OperationalError as exc:
            raise ToolUnavailableError(
                f"the document store at {self.where} failed: {str(exc).strip()}"
            ) from None

    def close(self) -> None:
        """Close the pool and the embedder's client (both reopen on next use)."""
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        close_embedder = getattr(self.embedder, "close", None)
        if close_embedder is not None:
            close_embedder()

    async def aclose(self) -> None:
        """``close`` for the runtime, which closes its services on exit."""
        self.close()

    def add(
        self, parsed: ParsedDocument, source: str, owner: str | None = None
    ) -> tuple[Document, Status]:
        """Store a parsed document from ``source`` (see ``KnowledgeStore.add``)."""
        document_id = document_id_for(source)
        current = self.get(document_id)
        if current is not None and current.content_hash == parsed.content_hash:
            return current, "unchanged"
        vectors = (  # outside the transaction: embedding takes the time
            embed_blocks(self.embedder, parsed)
            if self.embedder is not None and parsed.blocks
            else None
        )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._conn() as db:
            db.execute("select pg_advisory_xact_lock(hashtext(%s))", (document_id,))
            row = db.execute(
                "select version, content_hash from knowledge_documents where document_id = %s",
                (document_id,),
            ).fetchone()
            if row is not None and row["content_hash"] == parsed.content_hash:
                return self._stored(db, document_id), "unchanged"
            version = 1 if row is None else row["version"] + 1
            db.execute(
                "update knowledge_blocks set active = false where document_id = %s and active",
                (document_id,),
            )
            db.execute(
                "insert into knowledge_documents(document_id, title, author, document_type, "
                "created, keywords, source, content_hash, version, ingested_at, summary, owner) "
                "values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) "
                "on conflict (document_id) do update set title = excluded.title, "
                "author = excluded.author, document_type = excluded.document_type, "
                "created = excluded.created, keywords = excluded.keywords, "
                "source = excluded.source, content_hash = excluded.content_hash, "
                "version = excluded.version, ingested_at = excluded.ingested_at, "
                "summary = excluded.summary, owner = excluded.owner",
                (document_id, parsed.title, parsed.author, parsed.document_type, parsed.created,
                 json.dumps(parsed.keywords), source, parsed.content_hash, version, now,
                 extractive_summary(parsed), owner),
            )  # fmt: skip
            with db.cursor() as cursor:
                cursor.executemany(
                    "insert into knowledge_blocks(block_id, document_id, version, active, "
                    "position, block_type, content_text, page_number, section, image_url, "
                    "image_caption, document_title) "
                    "values (%s,%s,%s,true,%s,%s,%s,%s,%s,%s,%s,%s)",
                    [
                        (block_id_for(document_id, version, n), document_id, version, n, b.block_type,
                         _text(b.content_text), b.page_number, b.section,
                         image_url(b, document_id, version, n, source), b.image_caption,
                         parsed.title)
                        for n, b in enumerate(parsed.blocks, start=1)
                    ],
                )  # fmt: skip
                cursor.executemany(
                    "insert into knowledge_images values (%s, %s, %s)",
                    [
                        (block_id_for(document_id, version, n), b.image_media_type, b.image_data)
                        for n, b in enumerate(parsed.blocks, start=1)
                        if b.image_data is not None
                    ],
                )
            if vectors is not None and self.embedder is not None:
                ids = [
                    r["id"]
                    for r in db.execute(
                        "select id from knowledge_blocks where document_id = %s and version = %s "
                        "order by position",
                        (document_id, version),
                    )
                ]
                with db.cursor() as cursor:
                    cursor.executemany(
                        "insert into knowledge_vectors values (%s, %s, %s::vector)",
                        [
                            (i, self.embedder.model_id, _vector(v))
                            for i, v in zip(ids, vectors, strict=True)
                        ],
                    )
            return self._stored(db, document_id), "added" if row is None else "updated"

    def remove(self, document_id: str) -> bool:
        """Delete a document and all its versions' blocks; False when it does not exist."""
        with self._conn() as db:
            db.execute("delete from knowledge_blocks where document_id = %s", (document_id,))
            gone = db.execute(
                "delete from knowledge_documents where document_id = %s", (document_id,)
            )
            return bool(gone.rowcount)

    def get(self, document_id: str, viewer: Viewer = EVERYONE) -> Document | None:
        """The document, or None (none has this id, or not in ``viewer``'s view)."""
        with self._conn() as db:
            doc = self._document(db, document_id)
        return doc if doc is not None and visible(doc.owner, viewer) else None

    def blocks(
        self, document_id: str, version: int | None = None, viewer: Viewer = EVERYONE
    ) -> list[dict[str, Any]]:
        """A document's blocks (the current version's, or ``version``'s), in order."""
        with self._conn() as db:
            doc = self._document(db, document_id)
            if doc is None or not visible(doc.owner, viewer):
                return []
            rows = db.execute(
                "select * from knowledge_blocks where document_id = %s and version = %s "
                "order by position",
                (document_id, version or doc.version),
            ).fetchall()
        return [_block(r) for r in rows]

    def documents(
        self,
        *,
        document_type: str | None = None,
        author: str | None = None,
        keywords: Sequence[str] = (),
        since: str | None = None,
        until: str | None = None,
        limit: int = 50,
        viewer: Viewer = EVERYONE,
    ) -> list[Document]:
        """Documents matching every filter given, newest ingestion first."""
        where, args = filter_conditions(
            "%s", viewer, document_type=document_type, author=author, since=since, until=until
        )
        if keywords:
            where.append(
                "(select coalesce(array_agg(lower(k)), '{}') from jsonb_array_elements_text"
                "(d.keywords) k) @> %s::text[]"
            )
            args.append([k.lower() for k in keywords])
        with self._conn() as db:
            rows = db.execute(
                "select d.*, (select count(*) from knowledge_blocks b where "
                "b.document_id = d.document_id and b.active) as blocks "
                f"from knowledge_documents d {_and(where, 'where')} "
                "order by ingested_at desc, title limit %s",
                [*args, limit],
            ).fetchall()
        return [_document(r) for r in rows]

    def search(
        self,
        query: str,
        top_k: int,
        *,
        mode: SearchMode | None = None,
        document_type: str | None = None,
        author: str | None = None,
        document_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        viewer: Viewer = EVERYONE,
    ) -> list[Hit]:
        """The ``top_k`` current blocks best matching ``query`` (see ``KnowledgeStore``).

        Raises:
            ValueError: ``mode`` needs vectors and the store has no embedder.
            ToolUnavailableError: the server failed.
        """
        chosen = check_mode(mode, self.mode, self.embedder is not None)
        where, args = filter_conditions(
            "%s",
            viewer,
            document_type=document_type,
            author=author,
            document_id=document_id,
            since=since,
            until=until,
        )
        depth = top_k if chosen != "hybrid" else max(50, top_k * 4)
        deeper = depth if chosen != "hybrid" else 4 * depth  # documents' scores (by_document)
        with self._conn() as db:
            lexical = self._lexical(db, query, deeper, where, args) if chosen != "dense" else []
            dense = self._dense(db, query, depth, where, args) if chosen != "lexical" else []
        if chosen != "hybrid":
            return [Hit(_block(r), round(float(r["score"]), 4)) for r in lexical or dense]
        scored = [(_block(r), float(r["score"])) for r in lexical]
        nearest = [(_block(r), float(r["score"])) for r in dense]
        return hybrid(query, scored, nearest, depth, top_k)

    def _lexical(
        self, db: Any, query: str, depth: int, where: list[str], args: list[Any]
    ) -> list[dict[str, Any]]:
        words = query_words(query)
        if not words:
            return []
        rows: list[dict[str, Any]] = []
        for groups in strict_then_loose(words):  # few blocks to rank first
            tsquery = " | ".join("(" + " & ".join(g) + ")" for g in groups)
            rows = db.execute(
                "select b.*, ts_rank(b.tsv, q, 1) as score "
                "from knowledge_blocks b join knowledge_documents d using (document_id), "
                "to_tsquery('english', %s) q "
                f"where b.active and b.tsv @@ q {_and(where)} order by score desc limit %s",
                [tsquery, *args, depth],
            ).fetchall()
            if len(rows) >= depth:
                break
        return rows

    def _dense(
        self, db: Any, query: str, depth: int, where: list[str], args: list[Any]
    ) -> list[dict[str, Any]]:
        assert self.embedder is not None
        vector = _vector(self.embedder.embed([query])[0])
        db.execute(f"set local hnsw.ef_search = {min(max(depth, 40), 1000)}")
        db.execute("set local hnsw.iterative_scan = relaxed_order")
        rows = db.execute(
            "select * from (select b.*, 1 - (v.embedding <=> %s::vector) as score "
            "from knowledge_vectors v join knowledge_blocks b on b.id = v.id "
            "join knowledge_documents d using (document_id) "
            f"where b.active and v.model = %s {_and(where)} "
            "order by v.embedding <=> %s::vector limit %s) found order by score desc",
            [vector, self.embedder.model_id, *args, vector, depth],
        ).fetchall()
        return list(rows)

    def image(self, block_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of an image block that carries its image, or None."""
        with self._conn() as db:
            row = db.execute(
                "select media_type, data from knowledge_images where block_id = %s", (block_id,)
            ).fetchone()
        return None if row is None else (row["media_type"], bytes(row["data"]))

    def neighbours(self, block_id: str, reach: int) -> list[dict[str, Any]]:
        """The blocks within ``reach`` positions of ``block_id`` in its version, in order."""
        place = block_place(block_id)
        if place is None:
            return []
        document, version, position = place
        with self._conn() as db:
            rows = db.execute(
                "select * from knowledge_blocks where document_id = %s and version = %s "
                "and position between %s and %s order by position",
                (document, version, position - reach, position + reach),
            ).fetchall()
        return [_block(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        """(documents, current blocks)."""
        with self._conn() as db:
            docs = db.execute("select count(*) as n from knowledge_documents").fetchone()["n"]
            blocks = db.execute(
                "select count(*) as n from knowledge_blocks where active"
            ).fetchone()["n"]
        return int(docs), int(blocks)

    def _stored(self, db: Any, document_id: str) -> Document:
        document = self._document(db, document_id)
        assert document is not None  # written in this transaction
        return document

    def _document(self, db: Any, document_id: str) -> Document | None:
        row = db.execute(
            "select d.*, (select count(*) from knowledge_blocks b where "
            "b.document_id = d.document_id and b.active) as blocks "
            "from knowledge_documents d where document_id = %s",
            (document_id,),
        ).fetchone()
        return None if row is None else _document(row)


def _and(clauses: list[str], word: str = "and") -> str:
    return f"{word} " + " and ".join(clauses) if clauses else ""


def _text(text: str) -> str:
    """Text PostgreSQL accepts (it refuses NUL characters)."""
    return text.replace("\x00", "")


def _vector(values: Any) -> str:
    """Pgvector's text form of a vector: ``[0.1,0.2,...]``."""
    return "[" + ",".join(f"{float(v):.7g}" for v in values) + "]"


def _block(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in BLOCK_FIELDS}


def _document(row: dict[str, Any]) -> Document:
    fields = {k: row[k] for k in Document.__dataclass_fields__}
    fields["blocks"] = int(row["blocks"])
    keywords = fields["keywords"]
    fields["keywords"] = json.loads(keywords) if isinstance(keywords, str) else list(keywords)
    return Document(**fields)
