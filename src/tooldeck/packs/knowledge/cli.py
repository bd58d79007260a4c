"""``tooldeck docs``: add, list, show and remove the documents the knowledge tools search."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from tooldeck.cli.shared import (
    ConfigOption,
    clip,
    err,
    out,
    pack_settings,
    row,
    runtime_for,
    session,
)
from tooldeck.core.result import ToolResult
from tooldeck.exceptions import ToolDeckError, ToolFailure

if TYPE_CHECKING:  # imported when a command runs: the knowledge pack is heavy
    from tooldeck.packs.knowledge.config import KnowledgeConfig
    from tooldeck.packs.knowledge.store import Document, KnowledgeStore

__all__ = ["docs_app"]

docs_app = typer.Typer(
    rich_markup_mode=None,
    help="Documents the knowledge tools search and cite (PDF, DOCX, HTML, Markdown, text): "
    "add, list, show, search, rm.",
    no_args_is_help=True,
)

SUFFIXES = (".pdf", ".docx", ".html", ".htm", ".md", ".markdown", ".txt")
"""What a folder contributes: files with these suffixes, at any depth."""


@contextmanager
def _store(config: Path | None) -> Iterator[tuple[KnowledgeConfig, KnowledgeStore]]:
    """The ``[knowledge]`` table and the store, closed afterwards.

    A bad configuration, or a store that cannot be used (a PostgreSQL server down), is
    said in one line and the command exits 2.
    """
    from tooldeck.packs.knowledge.pack import embedder_of, open_store

    knowledge, environment = pack_settings(config, "knowledge")
    try:
        store = open_store(knowledge, environment.data_dir, embedder_of(knowledge))
    except ToolDeckError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    try:
        yield knowledge, store
    except ToolFailure as exc:
        err.print(f"[red]error:[/red] {escape(exc.message)}")
        raise typer.Exit(2) from None
    finally:
        store.close()


_SUFFIX_OF_TYPE = {"application/pdf": ".pdf", "text/html": ".html", "text/markdown": ".md"}


def _download(url: str, knowledge: KnowledgeConfig, limit: int) -> tuple[bytes, str]:
    """The bytes of ``url`` and a name for them, past the address guard.

    Every hop of a redirect is checked: a URL that leads to a private address is refused
    unless ``[knowledge] allow_hosts`` allows it.

    Raises:
        DocumentError: the guard refused it, the server failed, or it is over ``limit``.
    """
    import asyncio

    import httpx

    from tooldeck.isolation.address_guard import AddressGuard
    from tooldeck.isolation.guarded_fetch import Fetched, FetchLimits, guarded_get
    from tooldeck.packs.knowledge.parse import DocumentError

    guard = AddressGuard(knowledge.allow_hosts, setting="[knowledge] allow_hosts")
    limits = FetchLimits(max_bytes=limit, timeout_s=60.0, setting="5 redirects")

    async def get() -> Fetched:
        async with httpx.AsyncClient() as client:
            return await guarded_get(client, url, limits, guard)

    try:
        fetched = asyncio.run(get())
    except ToolFailure as exc:
        raise DocumentError(str(exc)) from None
    if fetched.cut:
        raise DocumentError(f"over the {limit / 1e6:.0f} MB limit ([knowledge] max_file_mb)")
    name = Path(fetched.url.path).name or "index"
    content_type = fetched.response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not Path(name).suffix:
        name += _SUFFIX_OF_TYPE.get(content_type, ".txt")
    return fetched.body, name


def _files(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The files named (folders walked, globs expanded), and the names that match none."""
    files: list[Path] = []
    missing: list[str] = []
    for name in paths:
        path = Path(name).expanduser()
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            matched = sorted(Path().glob(name)) if any(c in name for c in "*?[") else []
            files += [p for p in matched if p.is_file()]
            if not matched:
                missing.append(name)
    return list(dict.fromkeys(p.resolve() for p in files)), missing


@docs_app.command("add")
def add(
    paths: Annotated[list[str], typer.Argument(help="Files, folders, globs or http(s) URLs.")],
    config: ConfigOption = None,
) -> None:
    """Ingest documents: unchanged ones are skipped, changed ones become a new version.

    URLs are fetched past the address guard (a private address is refused, after every
    redirect too, unless ``[knowledge] allow_hosts`` allows it).

    A file that cannot be read is reported with the reason and the rest goes on; the
    exit code is 1 when any failed.
    """
    with _store(config) as (knowledge, store):
        _add(paths, knowledge, store)


def _add(paths: list[str], knowledge: KnowledgeConfig, store: KnowledgeStore) -> None:
    from tooldeck.packs.knowledge.parse import DocumentError
    from tooldeck.packs.knowledge.reader import DocumentReader

    urls = [p for p in paths if p.lower().startswith(("http://", "https://"))]
    files, missing = _files([p for p in paths if p not in urls])
    for name in missing:
        err.print(f"[red]not found:[/red] {escape(name)}")
    reader = DocumentReader(knowledge)
    limit = reader.max_bytes
    failed = len(missing)
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())  # fmt: skip
    blocks, begin = 0, time.monotonic()
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("ingesting", total=len(files) + len(urls), rate="")
        sources: list[str | Path] = [*urls, *files]
        for path in sources:
            label = path if isinstance(path, str) else path.name
            progress.update(task, description=escape(label[:40]))
            try:
                if isinstance(path, str):
                    data, name = _download(path, knowledge, limit)
                else:
                    if path.stat().st_size > limit:
                        raise DocumentError(
                            f"{path.stat().st_size / 1e6:.0f} MB is over the "
                            f"{knowledge.max_file_mb} MB limit ([knowledge] max_file_mb)"
                        )
                    data, name = path.read_bytes(), path.name
                parsed = reader.read(data, name)
                document, status = store.add(parsed, str(path))
            except (DocumentError, OSError, ToolFailure) as exc:
                failed += 1
                progress.console.print(
                    f"[red]failed:[/red] {escape(str(path))}: {escape(str(exc))}"
                )
            else:
                counts[status] += 1
                blocks += document.blocks if status != "unchanged" else 0
                rate = blocks / max(time.monotonic() - begin, 1e-3)
                progress.update(task, rate=f"{rate:,.0f} blocks/s" if blocks else "")
                progress.console.print(
                    f"{status}: {escape(str(path))} → {document.document_id} "
                    f"v{document.version} ({document.blocks} blocks)"
                )
            progress.advance(task)
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    seconds = time.monotonic() - begin
    err.print(f"{summary}, {failed} failed; {blocks:,} blocks stored in {seconds:.1f} s")
    if failed:
        raise typer.Exit(1)


@docs_app.command("list")
def list_(
    config: ConfigOption = None,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
) -> None:
    """The documents, newest first."""
    with _store(config) as (_, store):
        documents = store.documents(limit=10_000)
    if as_json:
        for d in documents:
            typer.echo(json.dumps(_json(d)))
        return
    table = Table("id", "title", "type", "version", "blocks", "added", "source")
    for d in documents:
        row(table, d.document_id, d.title, d.document_type, str(d.version), str(d.blocks),
            d.ingested_at, d.source)  # fmt: skip
    out.print(table)


def _json(d: Document) -> dict[str, object]:
    return {**asdict(d), "source_id": d.source_id}


@docs_app.command("show")
def show(
    document_id: str,
    config: ConfigOption = None,
    blocks: bool = typer.Option(False, "--blocks", help="Print every block too."),
) -> None:
    """A document's metadata and summary (exit 2 when no document has this id)."""
    with _store(config) as (_, store):
        document = store.get(document_id)
        if document is None:
            err.print(
                f"[red]error:[/red] no document {escape(document_id)}; see tooldeck docs list"
            )
            raise typer.Exit(2)
        out.print_json(data=_json(document))
        for block in store.blocks(document_id) if blocks else []:
            where = f"p. {block['page_number']}" if block["page_number"] else block["section"]
            out.print(f"[{block['block_type']}] {where or ''}", markup=False)
            out.print(block["content_text"], markup=False)


@docs_app.command("rm")
def rm(document_id: str, config: ConfigOption = None) -> None:
    """Remove a document and all its versions (exit 2 when no document has this id)."""
    with _store(config) as (_, store):
        gone = store.remove(document_id)
    if not gone:
        err.print(f"[red]error:[/red] no document {escape(document_id)}; see tooldeck docs list")
        raise typer.Exit(2)
    err.print(f"removed {document_id}")


@docs_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="Blocks.")] = 5,
    config: ConfigOption = None,
    as_json: bool = typer.Option(False, "--json", help="The tool's result as JSON."),
) -> None:
    """Search the documents: the best blocks with their document, page and source_id.

    The same call as the semantic_search tool (its policies and audit), from the shell.
    """
    runtime = runtime_for(config, knowledge={"enabled": True})

    async def body() -> ToolResult:
        arguments = {"query": query, "top_k": limit}
        return await runtime.provider.execute(
            "semantic_search", arguments, runtime.context(channel="cli")
        )

    result = session(runtime, body)
    if as_json or result.error is not None:
        typer.echo(result.model_dump_json(indent=2))
        raise typer.Exit(0 if result.error is None else 1)
    found = (result.data or {}).get("blocks") or []
    if not found:
        err.print(f"nothing found for {escape(query)!r}; see tooldeck docs list")
        return
    for block in found:
        where = f"p. {block['page_number']}" if block["page_number"] else block["section"]
        head = Text(f"{block['document_title']}", "bold")
        head.append(f"  {where or ''}  {block['source_id']}  score {block['score']:.3g}")
        out.print(head)
        out.print(Text(clip(" ".join(block["content_text"].split()), 400)))
        out.print()
