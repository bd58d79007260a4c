"""Debian's Chromium under Playwright, for the browser tests.

Screenshots go to ``test-artifacts/`` (or ``$TOOLDECK_TEST_ARTIFACTS``). Without
``/usr/bin/chromium`` the browser tests are skipped, or fail when
``TOOLDECK_REQUIRE_BROWSER=1`` (CI sets it; ``make test`` installs Chromium where
apt-get can run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_BROWSER = (
    os.environ.get("TOOLDECK_REQUIRE_BROWSER") == "1"
)  # read before conftest clears it
ARTIFACTS = Path(
    os.environ.get("TOOLDECK_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")
)
CHROMIUM_ARGS = [  # no background requests: this machine has no network but the registries
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def launch_chromium(*extra_args: str) -> Iterator[Any]:
    """Debian's Chromium under Playwright; skips (or fails in CI) where it is missing."""
    if not CHROMIUM.exists():
        message = "Debian's chromium is not installed (make browser installs it)"
        if REQUIRE_BROWSER:
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args]
        )
        yield chromium
        chromium.close()
