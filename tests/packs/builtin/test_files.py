"""``files``: real files and symlinks under a temporary root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.config import load_settings
from tooldeck.packs.builtin import FilesTool, Roots
from tooldeck.packs.builtin.config import FilesConfig
from tooldeck.runtime import build_runtime

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# Title\nTODO: write more\n")
    (root / "docs" / "b.py").write_text("x = 1  # todo later\n")
    french = "Le café est très apprécié. Après le déjeuner, une crème brûlée près du château.\n"
    (root / "latin.txt").write_bytes(french.encode("latin-1") * 5)
    (root / "utf16.txt").write_text("naïve résumé\n", encoding="utf-16")
    (root / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 100)
    (tmp_path / "secret.txt").write_text("top secret")
    os.symlink(tmp_path / "secret.txt", root / "escape.txt")
    os.symlink(tmp_path, root / "escape_dir")
    os.symlink(root / "docs" / "a.md", root / "inner_link.md")
    return root


@pytest.fixture
def files(root: Path) -> FilesTool:
    return FilesTool(FilesConfig(max_read_bytes=1000, max_results=50), Roots([root]))


async def test_read_write_list_search(files: FilesTool, root: Path) -> None:
    read = await files.execute({"action": "read", "path": "docs/a.md"})
    assert read.data == {"path": "docs/a.md", "encoding": "utf-8", "size_bytes": 25,
                         "content": "# Title\nTODO: write more\n"}  # fmt: skip
    written = await files.execute({"action": "write", "path": "new/deep/n.txt", "content": "hi"})
    assert written.data == {"path": "new/deep/n.txt", "size_bytes": 2, "created": True}
    assert (root / "new" / "deep" / "n.txt").read_text() == "hi"
    again = await files.execute({"action": "write", "path": "new/deep/n.txt", "content": "x"})
    assert again.error is not None and "overwrite=true" in again.error.message
    replaced = await files.execute(
        {"action": "write", "path": "new/deep/n.txt", "content": "x", "overwrite": True}
    )
    assert replaced.data["created"] is False
    listing = await files.execute({"action": "list", "path": "docs"})
    assert [e["path"] for e in listing.data["entries"]] == ["docs/a.md", "docs/b.py"]
    found = await files.execute({"action": "search", "query": "todo"})
    assert [(m["path"], m["line"]) for m in found.data["matches"]] == [
        ("docs/a.md", 2),
        ("docs/b.py", 1),
    ]
    python_only = await files.execute(
        {"action": "search", "query": "TODO", "glob": "*.py", "case_sensitive": True}
    )
    assert python_only.data["matches"] == []


async def test_encoding_detection_binary_refusal_and_size_limit(
    files: FilesTool, root: Path
) -> None:
    latin = await files.execute({"action": "read", "path": "latin.txt"})
    assert latin.success, latin.error
    assert "crème brûlée près du château" in latin.data["content"]
    assert latin.data["encoding"] == "cp1252"
    utf16 = await files.execute({"action": "read", "path": "utf16.txt"})
    assert utf16.data["content"] == "naïve résumé\n" and utf16.data["encoding"] == "utf-16"
    binary = await files.execute({"action": "read", "path": "blob.bin"})
    assert binary.error is not None and binary.error.type == "validation"
    assert "binary file" in binary.error.message
    (root / "big.txt").write_text("x" * 5000)
    big = await files.execute({"action": "read", "path": "big.txt"})
    assert big.error is not None and "5000 bytes, over the read limit of 1000" in big.error.message
    missing = await files.execute({"action": "read", "path": "docs/a.mdx"})
    assert missing.error is not None and "did you mean 'a.md'" in missing.error.message


async def test_symlinks_inside_the_root_work(files: FilesTool) -> None:
    inner = await files.execute({"action": "read", "path": "inner_link.md"})
    assert inner.success and inner.data["content"].startswith("# Title")


TRAVERSALS = [
    ("read", "../secret.txt"),
    ("read", "docs/../../secret.txt"),
    ("read", "/etc/passwd"),
    ("read", "escape.txt"),
    ("read", "escape_dir/secret.txt"),
    ("read", "docs/../escape_dir/secret.txt"),
    ("read", "./../root/../secret.txt"),
    ("list", ".."),
    ("list", "/"),
    ("list", "escape_dir"),
    ("search", "escape_dir"),
    ("write", "../evil.txt"),
    ("write", "escape_dir/evil.txt"),
    ("write", "/tmp/evil.txt"),
    ("write", "docs/../../evil.txt"),
]


@pytest.mark.parametrize(("action", "path"), TRAVERSALS)
async def test_paths_resolving_outside_the_root_are_denied(
    files: FilesTool, root: Path, action: str, path: str
) -> None:
    arguments = {"action": action, "path": path}
    if action == "write":
        arguments["content"] = "pwned"
    if action == "search":
        arguments["query"] = "secret"
    result = await files.execute(arguments)
    assert result.error is not None and result.error.type == "denied", result
    assert "outside the allowed roots" in result.error.message
    assert not (root.parent / "evil.txt").exists()


async def test_nul_bytes_are_a_validation_error(files: FilesTool) -> None:
    result = await files.execute({"action": "read", "path": "a\x00b"})
    assert result.error is not None and result.error.type == "validation"


async def test_write_needs_confirmation_in_the_stack_and_read_does_not(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("hello")
    runtime = build_runtime(load_settings(builtin={"roots": [str(tmp_path)]}))
    try:
        definition = next(d for d in await runtime.provider.definitions() if d.name == "files")
        assert definition.confirm_actions == ("write",) and not definition.requires_confirmation
        read = await runtime.provider.execute("files", {"action": "read", "path": "r.txt"})
        assert read.data["content"] == "hello"
        write = await runtime.provider.execute(
            "files", {"action": "write", "path": "w.txt", "content": "x"}
        )
        assert write.error is not None and write.error.type == "confirmation_required"
        assert not (tmp_path / "w.txt").exists()
        runtime.approvals.approve(write.error.details["approval_id"])
        done = await runtime.provider.execute(
            "files", {"action": "write", "path": "w.txt", "content": "x"}
        )
        assert done.success and (tmp_path / "w.txt").read_text() == "x"
    finally:
        await runtime.aclose()


async def test_hard_links_are_neither_read_written_nor_searched(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET-OUTSIDE\n")
    os.link(outside, root / "linked.txt")
    files = FilesTool(FilesConfig(), Roots([root]))
    read = await files.execute({"action": "read", "path": "linked.txt"})
    assert read.error is not None and read.error.type == "denied"
    assert "hard links" in read.error.message
    written = await files.execute(
        {"action": "write", "path": "linked.txt", "content": "owned", "overwrite": True}
    )
    assert written.error is not None and written.error.type == "denied"
    assert outside.read_text() == "SECRET-OUTSIDE\n"  # not truncated, not written
    found = await files.execute({"action": "search", "query": "SECRET-OUTSIDE"})
    assert found.data["matches"] == []


def test_a_symlink_swapped_in_during_writes_never_leads_outside(root: Path, tmp_path: Path) -> None:
    import ctypes
    import threading

    from tooldeck.packs.builtin.files import Write, WriteRequest

    outside = tmp_path / "outside"
    outside.mkdir()
    target = root / "swap"
    target.mkdir()
    stop = threading.Event()

    (root / "swap.link").symlink_to(outside)
    libc = ctypes.CDLL(None, use_errno=True)

    def swapper() -> None:  # atomically exchanges root/swap (a directory) and a symlink out
        a, b = str(target).encode(), str(root / "swap.link").encode()
        while not stop.is_set():
            libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE

    write = Write(Roots([root]), FilesConfig())
    thread = threading.Thread(target=swapper)
    thread.start()
    outcomes: dict[str, int] = {}
    try:
        for _ in range(400):
            try:
                write.run(WriteRequest(path="swap/f.txt", content="x", overwrite=True), None)  # type: ignore[arg-type]
                outcome = "written"
            except Exception as exc:
                outcome = type(exc).__name__
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    finally:
        stop.set()
        thread.join()
    assert list(outside.iterdir()) == [], outcomes
    assert outcomes.get("written", 0) > 0, outcomes  # the race was really run
