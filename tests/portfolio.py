"""The shipped example portfolio read as a user's own data file (issue 54).

The grounding tests check an answer's figures, not the example-data label (tested in
``tests/agent/test_example_data.py``): their runtimes read a copy of the shipped file,
which is the user's data, as ``[brokerage] data_path`` would be.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tooldeck.config import Settings, load_settings
from tooldeck.packs.brokerage import DEFAULT_DATA_PATH


@functools.cache
def user_portfolio() -> Path:
    """A copy of the shipped data folder (the file and its facts) in a temporary folder,
    removed at exit; the path of its data file."""
    folder = Path(tempfile.mkdtemp(prefix="tooldeck-portfolio-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    shutil.copytree(DEFAULT_DATA_PATH.parent, folder / "data")
    return folder / "data" / DEFAULT_DATA_PATH.name


def user_settings(**overrides: Any) -> Settings:
    """Settings serving the copy as the user's file, without the built-in tools or audit."""
    return load_settings(
        builtin={"enabled": False},
        audit={"enabled": False},
        brokerage={"data_path": user_portfolio()},
        **overrides,
    )
