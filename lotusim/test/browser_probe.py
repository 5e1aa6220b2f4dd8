"""Helpers for tests that look at the console page in a real browser: Debian's headless chromium driven by
Playwright (skipped, with the reason, where either is missing), and a free TCP port on the loopback."""

from __future__ import annotations

import shutil
import socket

import pytest

SKIP_REASON = "no chromium (Debian: apt-get install chromium; .ci/run installs it) or no playwright"


def chromium_or_skip(module_level: bool = True):
    """(playwright.sync_api, the chromium executable), or skip the module (or the test) with the reason."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip(SKIP_REASON, allow_module_level=module_level)
    return sync_api, chromium


def free_port() -> int:
    """A TCP port no one listens on now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_fleet(page, count: int | None = None, timeout_s: float = 60.0) -> None:
    """Until the console page shows `count` vessels (any number > 0 if None)."""
    test = f"=== {count}" if count is not None else "> 0"
    page.wait_for_function(f"() => window.lotusim.fleet && window.lotusim.fleet.name.length {test}",
                           timeout=timeout_s * 1000)  # fmt: skip
