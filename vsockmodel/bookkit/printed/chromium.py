"""Printing the built pages with Chromium, through Playwright.

Debian's Chromium (``/usr/bin/chromium``), launched as the browser tests
launch it (tests/browser_support.py): Playwright's own browser download does not work
offline. The pages are served from a local server, as a reader's browser
gets them; the lab's runtime is not fetched (its page prints as text).

Chromium evaluates print media queries against the paper size it is given,
but lays a page out in the width of the paper's text (the paper less the
``@page`` margins). ``prepare.js`` measures the page in that same layout: a
window as wide as the paper, print media emulated, the page held to the
text's width.
"""

from __future__ import annotations

import contextlib
import http.server
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..serve import handler_for

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PREPARE_JS = (Path(__file__).parent / "prepare.js").read_text(encoding="utf-8")
#: What a printed page never needs: the lab's code and its Python runtime.
SKIPPED_REQUESTS = ("/_static/lab/", "/_static/vendor/pyodide/", "/_static/vendor/vega/")
#: Code and tables may shrink to this share of their font size to keep their lines.
MIN_FONT_SCALE = 0.7
PX_PER_MM = 96 / 25.4


@dataclass
class Printed:
    """One page as Chromium printed it."""

    pdf: bytes
    headings: list[dict] = field(default_factory=list)  # {id, level, text}, in page order
    clipped: list[str] = field(default_factory=list)    # still wider than the paper's text
    fitted: list[str] = field(default_factory=list)     # blocks set smaller, or wrapped, to fit


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """``root`` on 127.0.0.1 (a free port), from a thread; yields the base address."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_for(str(root)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class Printer:
    """One Chromium for a whole edition: ``print_page`` for the book's pages,
    ``print_html`` for the front matter. The paper is ``width_mm`` x
    ``height_mm``, with ``text_width_px`` CSS pixels of it for the text."""

    def __init__(self, base: str, width_mm: float, height_mm: float, text_width_px: int):
        if not Path(CHROMIUM).exists():
            raise FileNotFoundError(f"{CHROMIUM} is missing: the printed edition needs Debian's chromium "
                                    "(scripts/build-book installs it)")
        from playwright.sync_api import sync_playwright

        self.base = base
        self.text_width_px = text_width_px
        self._paper = {"width": f"{width_mm}mm", "height": f"{height_mm}mm"}
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        self._context = self._browser.new_context(
            viewport={"width": round(width_mm * PX_PER_MM), "height": round(height_mm * PX_PER_MM)},
            color_scheme="light", reduced_motion="reduce")
        self._context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if not url.startswith(self.base) or any(part in url for part in SKIPPED_REQUESTS):
            route.abort()
        else:
            route.continue_()

    def _pdf(self, page) -> bytes:
        # The size given here is what print media queries see; the CSS @page
        # rule (the same size) sets the margins.
        return page.pdf(prefer_css_page_size=True, print_background=True, **self._paper)

    def print_page(self, path: str, page_css: str) -> Printed:
        page = self._context.new_page()
        try:
            page.emulate_media(media="print")
            page.goto(self.base + path, wait_until="load")
            info = page.evaluate(PREPARE_JS, {"pageCss": page_css, "textWidth": self.text_width_px,
                                              "minFontScale": MIN_FONT_SCALE})
            pdf = self._pdf(page)
        finally:
            page.close()
        return Printed(pdf, info["headings"], info["clipped"], info["fitted"])

    def print_html(self, html: str) -> bytes:
        page = self._context.new_page()
        try:
            page.set_content(html, wait_until="load")
            return self._pdf(page)
        finally:
            page.close()

    def close(self) -> None:
        self._context.close()
        self._browser.close()
        self._pw.stop()
