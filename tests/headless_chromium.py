"""Headless Chromium for the tests that look at a page as a reader would (the exported web page,
the documentation site): Debian's Chromium, driven by playwright (its own browser download is not
used), and a static file server on 127.0.0.1."""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str | None:
    """The Chromium executable: $HOTSTART_CHROMIUM, else `chromium` / `chromium-browser` on PATH."""
    return os.environ.get("HOTSTART_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def missing() -> list[str]:
    """What is missing to drive Chromium, each with how to install it."""
    out = []
    if chromium() is None:
        out.append("Chromium (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        out.append("playwright (pip install playwright; it drives the system Chromium)")
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@functools.lru_cache(maxsize=None)
def served(folder: str) -> str:
    """Serve `folder` on 127.0.0.1 (a free port) from a daemon thread; return the base URL."""
    handler = functools.partial(_Quiet, directory=folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def launch(playwright):
    """A headless Chromium browser from a ``sync_playwright()`` context: the system's executable."""
    return playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
