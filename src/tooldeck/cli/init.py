"""``tooldeck init``: a commented ``tooldeck.toml`` and a ``tools.py`` with one tool."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tooldeck.cli.shared import err

__all__ = ["INIT_CONFIG", "INIT_TOOLS", "init"]

INIT_CONFIG = """\
# tooldeck.toml: found in this folder or any folder above it (or give --config,
# or set TOOLDECK_CONFIG). Every setting: docs/ in the tooldeck repository.

# Your tools: files, modules (mypkg.tools) or objects (mypkg.tools:registry).
tools = ["./tools.py"]

# Call history, runs and metrics live in .tooldeck/ beside this file.
# data_dir = ".tooldeck"

# [server]
# port = 8765                   # tooldeck serve; 127.0.0.1 unless you set host (and api_key)

# [profiles.support]            # a named view: tooldeck call -p support ...
# tools = ["word_count", "get_*"]
# confirm = ["word_count"]      # a human approves each call

# [mcp_servers.time]            # tools of an MCP server join yours
# command = "mcp-server-time"

# Your tools are served alone. Shipped packs join them when you say so (or --with):
# [builtin]
# enabled = true                # python, files, shell, web, git, github, math, llm
# roots = ["."]                 # what files, git, shell and python may touch
# [knowledge]
# enabled = true                # your documents: tooldeck docs add, semantic_search
"""

INIT_TOOLS = '''\
"""Your tools: every @tool function here is served by tooldeck (CLI, REST, UI, MCP)."""

from tooldeck import tool


@tool(source_id="tool:words:v1")
def word_count(text: str) -> dict:
    """Count the words and characters of a text.

    Args:
        text: The text to count.
    """
    return {"words": len(text.split()), "characters": len(text)}
'''


def init(
    folder: Annotated[Path, typer.Argument(help="Where to write (default: here).")] = Path(),
) -> None:
    """Write a commented tooldeck.toml and a tools.py with one example tool, where missing.

    A file that exists is kept as it is, never overwritten: in a folder with your own
    tools.py, only tooldeck.toml is written (its tools = ["./tools.py"] serves yours).
    Then: tooldeck call word_count text="hello world", or tooldeck serve.
    """
    files = {folder / "tooldeck.toml": INIT_CONFIG, folder / "tools.py": INIT_TOOLS}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            if path.exists():
                err.print(f"kept {escape(str(path))} (it exists: never overwritten)")
                continue
            path.write_text(text)
            err.print(f"wrote {escape(str(path))}")
    except OSError as exc:  # a read-only folder, a file where the folder should be
        err.print(
            f"[red]error:[/red] cannot write {escape(str(exc.filename or folder))}: "
            f"{escape(exc.strerror or str(exc))}"
        )
        raise typer.Exit(2) from None
    err.print(escape('next: tooldeck call word_count text="hello world"   or   tooldeck serve'))
