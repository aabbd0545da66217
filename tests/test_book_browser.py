"""Every page of the built book, in a real (headless) Chromium, offline.

For each page in the table of contents (plus search and index):

* no console errors and no uncaught exceptions;
* no request leaves localhost (all others are aborted and reported);
* every image loads (naturalWidth > 0) and has alt text;
* every embedded widget renders; each explorer shows its sliders and a figure;
* moving an explorer slider with the keyboard (no kernel) changes the figure;
* the page's transferred size (gzip, as a web host serves it) is < 3 MB, and
  its own content (HTML with embedded figures, images; not the shared
  _static/ files) is < 3 MB uncompressed.

Full-page screenshots in light and dark mode go to _build/screenshots/, and
page sizes to _build/page-sizes.json. Needs Debian's /usr/bin/chromium
(scripts/run-tests installs it); Playwright drives it, its own browser
download is not used.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from book_support import BUILD, HTML, REPO, book_pages, ensure_book_built, serve

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MAX_PAGE_BYTES = 3 * 1024 * 1024
SCREENSHOTS = BUILD / "screenshots"
# Documented harmless noise (sphinx-thebe is disabled, kept in case it returns).
IGNORED_CONSOLE = [re.compile(r"Identifier 'THEBE_JS_URL' has already been declared")]

PAGES = book_pages()
SIZES: dict[str, dict] = {}


def _require_browser() -> bool:
    return bool(os.environ.get("BOOK_REQUIRE_BROWSER") or os.environ.get("CI"))


@pytest.fixture(scope="module")
def site():
    ensure_book_built()
    with serve(HTML) as base:
        yield base
    if SIZES:
        (BUILD / "page-sizes.json").write_text(json.dumps(SIZES, indent=2, sort_keys=True))


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        msg = f"{CHROMIUM} is missing (scripts/run-tests installs Debian's chromium)"
        if _require_browser():
            pytest.fail(msg)
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class PageRecorder:
    """Opens a page in a fresh context, recording errors, requests and sizes."""

    def __init__(self, browser, base: str, dark: bool = False):
        self.base = base
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.transferred = 0
        self.runtime_bytes = 0
        self.own_bytes = 0
        self.requests: list[str] = []
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900},
            color_scheme="dark" if dark else "light",
        )
        mode = "dark" if dark else "light"
        self.context.add_init_script(
            f"try {{ localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}'); }} catch (e) {{}}"
        )
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        self.page.on("requestfinished", self._finished)
        self.page.on("requestfailed", self._failed)

    def _route(self, route):
        url = route.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def _console(self, msg):
        if msg.type == "error" and not any(p.search(msg.text) for p in IGNORED_CONSOLE):
            self.errors.append(f"console: {msg.text}")

    def _failed(self, request):
        if request.url not in self.blocked:
            self.errors.append(f"request failed: {request.url} ({request.failure})")

    def _finished(self, request):
        url = request.url
        if not url.startswith(self.base):
            return
        self.requests.append(url)
        sizes = request.sizes()
        size = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        if "/_static/vendor/pyodide/" in url or "/_static/lab/wheels/" in url:
            self.runtime_bytes += size      # the lab's Python runtime: reported, not limited
            return
        self.transferred += size
        path = urlsplit(url).path.lstrip("/")
        if not path.startswith("_static/"):
            local = HTML / path
            if local.is_file():
                self.own_bytes += local.stat().st_size
        response = request.response()
        if response is not None and response.status >= 400:
            self.errors.append(f"HTTP {response.status}: {url}")

    def open(self, path: str):
        self.page.goto(self.base + path, wait_until="load")
        self.page.wait_for_load_state("networkidle")
        if self.page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count():
            # Widgets render on window load; wait for the views to appear.
            self.page.wait_for_function(
                """() => [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
                      .every(s => { const a = s.previousElementSibling;
                                    return a && a.classList.contains('widget-subarea') && a.children.length > 0; })""",
                timeout=30000,
            )
            self.page.wait_for_load_state("networkidle")
        return self.page

    def close(self):
        self.context.close()


JS_IMAGES = """() => [...document.images].map(img => ({
    src: img.currentSrc.slice(0, 120),
    alt: img.getAttribute('alt'),
    complete: img.complete,
    width: img.naturalWidth,
}))"""

JS_VISIBLE_FIGURE = """(root) => {
    const imgs = [...root.querySelectorAll('img')].filter(i => i.getClientRects().length > 0);
    return imgs.length ? imgs[0].src : null;
}"""


def _explorers_built(notebook: Path) -> int:
    """Calls of explorer(...) in the notebook's code cells."""
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return len(re.findall(r"(?<!def )\bexplorer\(", code))


def _slug(path: str) -> str:
    return path.removesuffix(".html").replace("/", "-")


@pytest.mark.parametrize("path", PAGES)
def test_page(site, browser, path):
    rec = PageRecorder(browser, site)
    try:
        page = rec.open(path)
        problems: list[str] = []

        for img in page.evaluate(JS_IMAGES):
            if not img["complete"] or img["width"] == 0:
                problems.append(f"image failed to load: {img['src']}")
            if not (img["alt"] or "").strip():
                problems.append(f"image without alt text: {img['src']}")

        views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
        subareas = page.locator(".widget-subarea").count()
        if subareas < views:
            problems.append(f"{views - subareas} of {views} widgets did not render")

        explorers = page.locator(".vsock-explorer")
        notebook = REPO / Path(path).with_suffix(".ipynb")
        expected = _explorers_built(notebook) if notebook.exists() else 0
        if explorers.count() < expected:
            problems.append(f"{explorers.count()} explorers on the page, {expected} in the notebook")
        for i in range(explorers.count()):
            explorer = explorers.nth(i)
            sliders = explorer.locator(".widget-slider")
            if sliders.count() == 0 or not sliders.first.is_visible():
                problems.append(f"explorer {i}: no visible slider")
                continue
            figure = explorer.locator("img").first
            if not figure.is_visible():
                problems.append(f"explorer {i}: no visible figure")
                continue
            for s in range(sliders.count()):
                before = explorer.evaluate(JS_VISIBLE_FIGURE)
                handle = sliders.nth(s).locator(".noUi-handle")
                handle.focus()
                page.keyboard.press("ArrowRight")
                deadline = time.monotonic() + 5
                after = before
                while time.monotonic() < deadline and after == before:
                    page.wait_for_timeout(100)
                    after = explorer.evaluate(JS_VISIBLE_FIGURE)
                if after is None or after == before:
                    label = sliders.nth(s).locator(".widget-label").inner_text()
                    problems.append(f"explorer {i}: moving slider '{label}' did not change the figure")

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"{_slug(path)}-light.png"), full_page=True)

        SIZES[path] = {
            "transferred_bytes": rec.transferred,
            "runtime_bytes": rec.runtime_bytes,
            "own_bytes": rec.own_bytes,
            "requests": len(rec.requests),
        }
        if rec.transferred >= MAX_PAGE_BYTES:
            problems.append(f"page transferred {rec.transferred / 1e6:.2f} MB (limit 3 MB)")
        if rec.own_bytes >= MAX_PAGE_BYTES:
            problems.append(f"page's own content is {rec.own_bytes / 1e6:.2f} MB (limit 3 MB)")
        problems += [f"blocked external request: {u}" for u in rec.blocked]
        problems += rec.errors
        assert not problems, f"{path}:\n  " + "\n  ".join(problems)
    finally:
        rec.close()


@pytest.mark.parametrize("path", PAGES)
def test_page_dark_mode(site, browser, path):
    """The page also loads cleanly in dark mode; screenshot for review."""
    rec = PageRecorder(browser, site, dark=True)
    try:
        page = rec.open(path)
        theme = page.evaluate("document.documentElement.dataset.theme")
        page.screenshot(path=str(SCREENSHOTS / f"{_slug(path)}-dark.png"), full_page=True)
        problems = [f"blocked external request: {u}" for u in rec.blocked] + rec.errors
        if theme != "dark":
            problems.append(f"theme is {theme!r}, expected 'dark'")
        assert not problems, f"{path} (dark):\n  " + "\n  ".join(problems)
    finally:
        rec.close()
