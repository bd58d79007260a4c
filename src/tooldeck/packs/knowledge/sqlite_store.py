"""The embedded document store: one SQLite file in the data dir, FTS5 (BM25) and vectors.

The FTS5 index holds the current blocks only (a trigger takes a block out when a new
version replaces it), so a lexical search without filters is FTS5's own ``order by
rank limit k``. Vectors are float32 blobs, searched by brute force in numpy over a
matrix cached until the next write: about 8 ms for 100,000 blocks of 384 dimensions.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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

__all__ = ["SqliteStore"]

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tooldeck-dense")
"""Runs a hybrid search's dense side (embedding the query, the matrix product: both
release the GIL) while the calling thread runs the lexical side."""

_VERSION = 2
"""``pragma user_version`` of the schema below. 1 indexed every version's blocks in FTS5."""

_SCHEMA = """
create table if not exists documents(
    document_id text primary key, title text not null, author text, document_type text not null,
    created text, keywords text not null, source text not null, content_hash text not null,
    version integer not null, ingested_at text not null, summary text not null, owner text);
create table if not exists blocks(
    rowid integer primary key, block_id text unique not null, document_id text not null,
    version integer not null, active integer not null, position integer not null,
    block_type text not null, content_text text not null, page_number integer,
    section text not null, image_url text, image_caption text, document_title text not null);
create index if not exists blocks_document on blocks(document_id, version);
create table if not exists vectors(
    rowid integer primary key, model text not null, vector blob not null);
create table if not exists images(
    block_id text primary key, media_type text not null, data blob not null);
drop trigger if exists blocks_ai;
drop trigger if exists blocks_ad;
drop trigger if exists blocks_au;
create virtual table if not exists blocks_fts using fts5(
    content_text, document_title, section, content='blocks', content_rowid='rowid',
    tokenize='porter unicode61');
insert into blocks_fts(blocks_fts, rank) values ('rank', 'bm25(1.0, 0.5, 0.3)');
create trigger blocks_ai after insert on blocks when new.active = 1 begin
    insert into blocks_fts(rowid, content_text, document_title, section)
    values (new.rowid, new.content_text, new.document_title, new.section); end;
create trigger blocks_au after update of active on blocks
    when old.active = 1 and new.active = 0 begin
    insert into blocks_fts(blocks_fts, rowid, content_text, document_title, section)
    values ('delete', old.rowid, old.content_text, old.document_title, old.section); end;
create trigger blocks_ad after delete on blocks when old.active = 1 begin
    insert into blocks_fts(blocks_fts, rowid, content_text, document_title, section)
    values ('delete', old.rowid, old.content_text, old.document_title, old.section); end;
"""

_REINDEX = """
insert into blocks_fts(rowid, content_text, document_title, section)
select rowid, content_text, document_title, section from blocks where active = 1;
"""


class SqliteStore:
    """Documents and their blocks in one SQLite file (WAL; safe across threads).

    Args:
        path: The database file; created with its folder on first use (a runtime that
            never touches its documents writes nothing). A file of an older schema is
            brought up to date when opened.
        embedder: Makes search hybrid; without one it is lexical (BM25) only.
    """

    def __init__(self, path: Path, embedder: Embedder | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self._lock = threading.RLock()
        """Held by writes (and to open or close connections)."""
        self._conn: sqlite3.Connection | None = None
        """The writer's connection; it also makes the schema."""
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._epoch = 0
        """Bumped by ``close``: each thread then opens a new reader."""
        self._matrix: tuple[tuple[int, int], Any, Any] | None = None
        """(version, rowids, vectors) of the current blocks, for dense search."""
        self._matrix_lock = threading.Lock()
        self._generation = 0

    @property
    def mode(self) -> SearchMode:
        """``hybrid`` (BM25 and dense vectors, fused by rank) with an embedder."""
        return "hybrid" if self.embedder is not None else "lexical"

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection, opened (and the schema made or migrated) on first use."""
        if self._conn is None:
            with self._lock:
                if self._conn is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                    db.row_factory = sqlite3.Row
                    db.execute("pragma journal_mode=wal")
                    version = db.execute("pragma user_version").fetchone()[0]
                    migrate = 0 < version < _VERSION  # FTS5 held old versions too: rebuild
                    db.executescript(
                        "begin immediate;"
                        + ("drop table if exists blocks_fts;" if migrate else "")
                        + _SCHEMA
                        + (_REINDEX if migrate else "")
                        + f"pragma user_version = {_VERSION}; commit;"
                    )
                    columns = [r[1] for r in db.execute("pragma table_info(documents)")]
                    if "owner" not in columns:  # a file made before notes had owners
                        db.execute("alter table documents add column owner text")
                    self._conn = db
        return self._conn

    @property
    def _read(self) -> sqlite3.Connection:
        """This thread's own reading connection.

        With WAL, readers wait neither for each other nor for a write.
        """
        local = self._local
        if getattr(local, "epoch", None) != self._epoch or local.conn is None:
            self._db  # noqa: B018  # the schema exists before anyone reads
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.row_factory = sqlite3.Row
            with self._lock:
                self._readers.append(conn)
            local.conn, local.epoch = conn, self._epoch
        return local.conn  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the database and the embedder's client (both reopen on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            for reader in self._readers:
                reader.close()
            self._readers.clear()
            self._epoch += 1
        close_embedder = getattr(self.embedder, "close", None)
        if close_embedder is not None:
            close_embedder()

    async def aclose(self) -> None:
        """``close`` for the runtime, which closes its services on exit."""
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("begin immediate")
            try:
                yield self._db
            except BaseException:
                self._db.execute("rollback")
                raise
            self._db.execute("commit")

    def add(
        self, parsed: ParsedDocument, source: str, owner: str | None = None
    ) -> tuple[Document, Status]:
        """Store a parsed document from ``source`` (see ``KnowledgeStore.add``)."""
        document_id = document_id_for(source)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        current = self.get(document_id)
        if current is not None and current.content_hash == parsed.content_hash:
            return current, "unchanged"
        vectors = (  # outside the write lock: embedding takes the time
            embed_blocks(self.embedder, parsed)
            if self.embedder is not None and parsed.blocks
            else None
        )
        with self._tx() as db:
            row = db.execute(
                "select version, content_hash from documents where document_id = ?",
                (document_id,),
            ).fetchone()
            if row is not None and row["content_hash"] == parsed.content_hash:
                return self._stored(db, document_id), "unchanged"
            version = 1 if row is None else row["version"] + 1
            db.execute(
                "update blocks set active = 0 where document_id = ? and active = 1",
                (document_id,),
            )
            db.execute(
                "insert or replace into documents values (?,?,?,?,?,?,?,?,?,?,?,?)",
                (document_id, parsed.title, parsed.author, parsed.document_type, parsed.created,
                 json.dumps(parsed.keywords), source, parsed.content_hash, version, now,
                 extractive_summary(parsed), owner),
            )  # fmt: skip
            db.executemany(
                "insert into blocks(block_id, document_id, version, active, position, "
                "block_type, content_text, page_number, section, image_url, image_caption, "
                "document_title) values (?,?,?,1,?,?,?,?,?,?,?,?)",
                [
                    (block_id_for(document_id, version, n), document_id, version, n, b.block_type,
                     b.content_text, b.page_number, b.section,
                     image_url(b, document_id, version, n, source), b.image_caption, parsed.title)
                    for n, b in enumerate(parsed.blocks, start=1)
                ],
            )  # fmt: skip
            db.executemany(
                "insert or replace into images values (?,?,?)",
                [
                    (block_id_for(document_id, version, n), b.image_media_type, b.image_data)
                    for n, b in enumerate(parsed.blocks, start=1)
                    if b.image_data is not None
                ],
            )
            if vectors is not None and self.embedder is not None:
                rowids = [
                    r[0]
                    for r in db.execute(
                        "select rowid from blocks where document_id = ? and version = ? "
                        "order by position",
                        (document_id, version),
                    )
                ]
                db.executemany(
                    "insert or replace into vectors values (?,?,?)",
                    [
                        (rowid, self.embedder.model_id, vector.tobytes())
                        for rowid, vector in zip(rowids, vectors, strict=True)
                    ],
                )
            self._generation += 1
            return self._stored(db, document_id), "added" if row is None else "updated"

    def remove(self, document_id: str) -> bool:
        """Delete a document and all its versions' blocks; False when it does not exist."""
        with self._tx() as db:
            db.execute(
                "delete from vectors where rowid in (select rowid from blocks where document_id = ?)",
                (document_id,),
            )
            db.execute(
                "delete from images where block_id in "
                "(select block_id from blocks where document_id = ?)",
                (document_id,),
            )
            db.execute("delete from blocks where document_id = ?", (document_id,))
            self._generation += 1
            gone = db.execute("delete from documents where document_id = ?", (document_id,))
            return gone.rowcount > 0

    def get(self, document_id: str, viewer: Viewer = EVERYONE) -> Document | None:
        """The document, or None (none has this id, or not in ``viewer``'s view)."""
        doc = self._document(self._read, document_id)
        return doc if doc is not None and visible(doc.owner, viewer) else None

    def blocks(
        self, document_id: str, version: int | None = None, viewer: Viewer = EVERYONE
    ) -> list[dict[str, Any]]:
        """A document's blocks (the current version's, or ``version``'s), in order."""
        doc = self.get(document_id, viewer)
        if doc is None:
            return []
        rows = self._read.execute(
            "select * from blocks where document_id = ? and version = ? order by position",
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
        """Documents matching every filter given, newest ingestion first.

        Before the file exists: none, and the file is not made.
        """
        if self._conn is None and not self.path.exists():
            return []
        where, args = _where(
            viewer, document_type=document_type, author=author, since=since, until=until
        )
        rows = self._read.execute(
            "select document_id from documents d "
            + (f"where {where} " if where else "")
            + "order by ingested_at desc, title",
            args,
        ).fetchall()
        docs = [self._document(self._read, r["document_id"]) for r in rows]
        wanted = {k.lower() for k in keywords}
        out = [d for d in docs if d and wanted <= {k.lower() for k in d.keywords}]
        return out[:limit]

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
        """The ``top_k`` current blocks best matching ``query``, filtered by document fields.

        Lexical: BM25 over block text, document title and section (weights 1, 0.5, 0.3;
        any word may match, more and rarer words rank higher). Dense: cosine of the
        query's vector against each block's. Hybrid (the default with an embedder): both
        rankings fused by reciprocal rank; the score is then the fused one.

        Raises:
            ValueError: ``mode`` needs vectors and the store has no embedder.
        """
        chosen = check_mode(mode, self.mode, self.embedder is not None)
        where, args = _where(
            viewer,
            document_type=document_type,
            author=author,
            document_id=document_id,
            since=since,
            until=until,
        )
        if chosen == "lexical":  # BM25 alone: its own top k is the answer
            rows = self._lexical(query, top_k, where, args)
            return [Hit(_block(r), round(-float(r["rank"]), 4)) for r in rows]
        if chosen == "dense":
            nearest = self._dense(query, top_k, where, args)
            return [Hit(_block(r), round(score, 4)) for r, score in nearest]
        depth = max(50, top_k * 4)  # candidates for the fusion
        pending = _POOL.submit(self._dense, query, depth, where, args)  # embeds meanwhile
        scored = [
            (_block(r), -float(r["rank"])) for r in self._lexical(query, 4 * depth, where, args)
        ]
        dense = [(_block(r), score) for r, score in pending.result()]
        return hybrid(query, scored, dense, depth, top_k)

    def _lexical(self, query: str, depth: int, where: str, args: list[Any]) -> list[sqlite3.Row]:
        """BM25's best ``depth`` blocks, looked for among few blocks first.

        The queries of ``strict_then_loose``, in turn, until one finds ``depth`` blocks.
        """
        words = query_words(query)
        if not words:
            return []
        if where:  # documents' fields: join first, then rank what is left
            sql = (
                "select b.*, blocks_fts.rank as rank from blocks_fts "
                "join blocks b on b.rowid = blocks_fts.rowid "
                "join documents d on d.document_id = b.document_id "
                f"where blocks_fts match ? and {where} order by rank limit ?"
            )
        else:  # FTS5 ranks and cuts by itself (only current blocks are indexed)
            sql = (
                "select b.*, top.rank as rank from (select rowid, rank from blocks_fts "
                "where blocks_fts match ? order by rank limit ?) top "
                "join blocks b on b.rowid = top.rowid order by top.rank"
            )
        rows: list[sqlite3.Row] = []
        for groups in strict_then_loose(words):
            match = " OR ".join("(" + " AND ".join(f'"{w}"' for w in g) + ")" for g in groups)
            params = [match, *args, depth] if where else [match, depth]
            rows = list(self._read.execute(sql, params).fetchall())
            if len(rows) >= depth:
                break
        return rows

    def _dense(
        self, query: str, depth: int, where: str, args: list[Any]
    ) -> list[tuple[sqlite3.Row, float]]:
        """The current blocks nearest ``query`` by cosine, with it (brute force in numpy)."""
        import numpy as np

        assert self.embedder is not None
        rowids, matrix = self._vectors()
        if not len(rowids):
            return []
        if where:  # keep the rows of the documents the filters allow
            allowed = [
                r[0]
                for r in self._read.execute(
                    "select b.rowid from blocks b join documents d "
                    f"on d.document_id = b.document_id where b.active = 1 and {where}",
                    args,
                )
            ]
            keep = np.isin(rowids, np.array(allowed, dtype=np.int64))
            rowids, matrix = rowids[keep], matrix[keep]
            if not len(rowids):
                return []
        scores = matrix @ self.embedder.embed([query])[0]
        count = min(depth, len(scores))
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top])]
        chosen = [int(rowids[i]) for i in top]
        marks = ",".join("?" * len(chosen))
        found = {
            r["rowid"]: r
            for r in self._read.execute(f"select * from blocks where rowid in ({marks})", chosen)
        }
        return [
            (found[r], float(scores[i])) for i, r in zip(top, chosen, strict=True) if r in found
        ]

    def _vectors(self) -> tuple[Any, Any]:
        """(rowids, matrix) of the current blocks' vectors, cached until the next write.

        Writes of this store bump its generation; writes of other processes (``tooldeck
        docs add`` beside a server) change the writer connection's ``data_version``.
        """
        import numpy as np

        with self._lock:
            version = (self._generation, self._db.execute("pragma data_version").fetchone()[0])
        with self._matrix_lock:
            cached = self._matrix
            if cached is not None and cached[0] == version:
                return cached[1], cached[2]
            rows = self._read.execute(
                "select v.rowid, v.vector from vectors v join blocks b on b.rowid = v.rowid "
                "where b.active = 1 and v.model = ?",
                (self.embedder.model_id if self.embedder else "",),
            ).fetchall()
            rowids = np.array([r[0] for r in rows], dtype=np.int64)
            matrix = (
                np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                if rows
                else np.zeros((0, 1), dtype=np.float32)
            )
            self._matrix = (version, rowids, matrix)
            return rowids, matrix

    def image(self, block_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of an image block that carries its image, or None."""
        row = self._read.execute(
            "select media_type, data from images where block_id = ?", (block_id,)
        ).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    def neighbours(self, block_id: str, reach: int) -> list[dict[str, Any]]:
        """The blocks within ``reach`` positions of ``block_id`` in its version, in order."""
        place = block_place(block_id)
        if place is None:
            return []
        document, version, position = place
        rows = self._read.execute(
            "select * from blocks where document_id = ? and version = ? "
            "and position between ? and ? order by position",
            (document, version, position - reach, position + reach),
        ).fetchall()
        return [_block(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        """(documents, current blocks)."""
        docs = self._read.execute("select count(*) from documents").fetchone()[0]
        blocks = self._read.execute("select count(*) from blocks where active = 1").fetchone()[0]
        return int(docs), int(blocks)

    def _stored(self, db: sqlite3.Connection, document_id: str) -> Document:
        document = self._document(db, document_id)
        assert document is not None  # written in this transaction
        return document

    def _document(self, db: sqlite3.Connection, document_id: str) -> Document | None:
        row = db.execute("select * from documents where document_id = ?", (document_id,)).fetchone()
        if row is None:
            return None
        count = db.execute(
            "select count(*) from blocks where document_id = ? and active = 1", (document_id,)
        ).fetchone()[0]
        fields = dict(row)
        fields["keywords"] = json.loads(fields["keywords"])
        return Document(**fields, blocks=int(count))


def _where(viewer: Viewer, **filters: str | None) -> tuple[str, list[Any]]:
    """``filter_conditions`` joined with ``and`` ("" for none), and their args."""
    conditions, args = filter_conditions("?", viewer, **filters)
    return " and ".join(conditions), args


def _block(row: sqlite3.Row) -> dict[str, Any]:
    return {k: row[k] for k in BLOCK_FIELDS}
