"""Every page of the built book, in a real (headless) Chromium, offline.

Each page in the table of contents (plus search and index) is opened as a
phone reader sees it (390 px wide, dark mode) and as a desktop reader does
(1280 px, light), and checked for:

* no console errors and no uncaught exceptions; no request leaves localhost
  (all others are aborted and reported);
* every image loads and has alt text; each explorer (the book's own HTML and
  script, no widget manager) shows its sliders and a figure, and moving a
  slider with the keyboard (no kernel) changes the figure to the one its
  alt text names;
* navigation: the ☰ button opens and closes the chapter drawer (a phone) or
  hides and shows the sidebar (desktop); on a phone the contents button
  opens the page's table of contents; one search control is visible;
* no identifier in a table is split over two lines; the page itself is no
  wider than the screen, and whatever scrolls sideways inside it shows the
  cue that it does;
* every figure opens larger, by a click and from its button with the
  keyboard, and closes again; opened on a phone, its smallest text is at
  least 9 CSS px (read from the SVG);
* each slider has its label as accessible name and its option ("64 B") as
  aria-valuetext, the same as its readout, and (on a phone) a touch target of
  at least 44 x 44 px; no hover text reads "null";
* the page's size as a web host sends it (gzip): a page with explorers
  <= 1.5 MB, any other page <= 300 KB.

And, with JavaScript disabled, each explorer shows its first figure as an
image. Full-page screenshots go to _build/screenshots/, page sizes to
_build/page-sizes.json. Needs Debian's /usr/bin/chromium (scripts/run-tests
installs it); Playwright drives it, its own browser download is not used.
"""

from __future__ import annotations

import functools
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
#: gzip-compressed sum of every response of a page (decimal units).
MAX_EXPLORER_PAGE_BYTES = 1_500_000
MAX_TEXT_PAGE_BYTES = 300_000
#: Pages that are interactive without widgets: the lab draws its precomputed
#: result with Vega-Lite before the runtime loads (the runtime is not counted:
#: it loads on the reader's request). They get the explorer pages' limit.
INTERACTIVE_PAGES = {"book/lab.html"}
MIN_FIGURE_TEXT_PX = 9
MIN_TOUCH_PX = 44
SCREENSHOTS = BUILD / "screenshots"
# Documented harmless noise (sphinx-thebe is disabled, kept in case it returns).
IGNORED_CONSOLE = [re.compile(r"Identifier 'THEBE_JS_URL' has already been declared")]

PAGES = book_pages()
LAYOUTS = {
    "phone": {"width": 390, "height": 844, "mode": "dark"},
    "desktop": {"width": 1280, "height": 900, "mode": "light"},
}
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

    def __init__(self, browser, base: str, layout: str = "desktop", javascript: bool = True):
        spec = LAYOUTS[layout]
        self.base = base
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.transferred = 0
        self.runtime_bytes = 0
        self.own_bytes = 0
        self.requests: list[str] = []
        mode = spec["mode"]
        self.context = browser.new_context(
            viewport={"width": spec["width"], "height": spec["height"]},
            color_scheme=mode,
            java_script_enabled=javascript,
        )
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

    def open(self, path: str, javascript: bool = True):
        self.page.goto(self.base + path, wait_until="load")
        self.page.wait_for_load_state("networkidle")
        if javascript and self.page.locator(EXPLORERS).count():
            # book.js shows each explorer's sliders once it has read its grid
            # (if it does not, test_page says which explorer is left).
            try:
                self.page.wait_for_function(
                    f"() => [...document.querySelectorAll('{EXPLORERS}')].every(e => e.dataset.bookExplorer)",
                    timeout=10000,
                )
            except Exception:
                pass
        return self.page

    def close(self):
        self.context.close()


EXPLORERS = ".vsock-explorer"
SLIDERS = 'input[type="range"]'

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

# Inline code in tables, word by word (Sphinx wraps each word in span.pre):
# a word drawn on two lines has two client rects.
JS_SPLIT_NAMES = """() => {
    const split = [...document.querySelectorAll('.bd-article table code')].flatMap(code => {
        const words = code.querySelectorAll('span.pre');
        return [...(words.length ? words : [code])];
    }).filter(w => w.getClientRects().length > 1).map(w => w.textContent);
    // The index page's entries are plain links: each word of them, as a Range.
    for (const a of document.querySelectorAll('.bd-article table.indextable a')) {
        const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/\\S+/g)) {
                const r = document.createRange();
                r.setStart(node, m.index);
                r.setEnd(node, m.index + m[0].length);
                const lines = new Set([...r.getClientRects()].map(q => Math.round(q.top)));
                if (lines.size > 1) split.push(m[0]);
            }
        }
    }
    return split;
}"""

# The page's own width, and every element in the article that scrolls
# sideways, with the cue book.js and book.css give it.
JS_OVERFLOW = """() => {
    const doc = document.documentElement;
    const scrollers = [...document.querySelectorAll('.bd-article *')].filter(el => {
        const ox = getComputedStyle(el).overflowX;
        // checkVisibility: not inside a closed <details> (a hidden code cell)
        return (ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1
            && el.checkVisibility();
    }).map(el => ({
        what: el.tagName.toLowerCase() + '.' + [...el.classList].join('.'),
        text: el.textContent.trim().slice(0, 40),
        cue: el.getAttribute('data-overflow'),
        mask: getComputedStyle(el).maskImage || getComputedStyle(el).webkitMaskImage,
    }));
    return {page: doc.scrollWidth, screen: doc.clientWidth, scrollers};
}"""

# The smallest text of an SVG figure, in CSS px, at a given displayed width:
# font sizes are in the SVG's user units, its viewBox maps them to the image.
JS_SVG_TEXT_PX = """async ([src, shownWidth]) => {
    const text = await (await fetch(src)).text();
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    if (svg.nodeName !== 'svg') return null;
    const vb = (svg.getAttribute('viewBox') || '').split(/[\\s,]+/).map(Number);
    const units = vb.length === 4 ? vb[2] : parseFloat(svg.getAttribute('width'));
    const sizes = [...text.matchAll(/font-size(?:=["']|:\\s*)([\\d.]+)/g)].map(m => parseFloat(m[1]));
    if (!sizes.length || !units) return null;
    return Math.min(...sizes) * shownWidth / units;
}"""


def _explorers_built(notebook: Path) -> int:
    """Calls of explorer(...) in the notebook's code cells."""
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return len(re.findall(r"(?<!def )\bexplorer\(", code))


def _slug(path: str) -> str:
    return path.removesuffix(".html").replace("/", "-")


def _viewer_open(page) -> bool:
    return page.evaluate("!!document.querySelector('dialog.book-viewer') && document.querySelector('dialog.book-viewer').open")


# --------------------------------------------------------------------- checks


def check_navigation(page, layout: str) -> list[str]:
    problems = []
    toggles = page.locator(".primary-toggle:visible")
    if toggles.count() != 1:
        return [f"{toggles.count()} visible ☰ buttons, expected 1"]
    toggle = toggles.first
    if layout == "phone":
        toggle.click()
        drawer = page.locator("#pst-primary-sidebar-modal")
        try:
            page.wait_for_function("document.querySelector('#pst-primary-sidebar-modal').open", timeout=3000)
        except Exception:
            return ["☰ did not open the chapter drawer"]
        if not drawer.locator("nav a.reference").first.is_visible():
            problems.append("the open drawer shows no chapter links")
        close = drawer.locator("button.book-drawer-close")
        if not close.is_visible():
            problems.append("the open drawer has no visible close button")
        else:
            if min(close.bounding_box()["width"], close.bounding_box()["height"]) < 44:
                problems.append("the drawer's close button is under 44 px")
            close.click()
            page.wait_for_timeout(150)
            if page.evaluate("document.querySelector('#pst-primary-sidebar-modal').open"):
                problems.append("the close button did not close the chapter drawer")
            if page.locator("#pst-primary-sidebar button.book-drawer-close").count():
                problems.append("the drawer's close button was left in the sidebar")
            if not toggle.evaluate("b => b === document.activeElement"):
                problems.append("closing the drawer did not return focus to ☰")
            toggle.click()
            page.wait_for_function("document.querySelector('#pst-primary-sidebar-modal').open", timeout=3000)
        page.keyboard.press("Escape")
        page.wait_for_timeout(150)
        if page.evaluate("document.querySelector('#pst-primary-sidebar-modal').open"):
            problems.append("Esc did not close the chapter drawer")
        small = page.evaluate("""() => [...document.querySelectorAll('.bd-header-article .btn, .bd-header-article .sidebar-toggle')]
            .filter(e => e.getClientRects().length)
            .map(e => [e.getAttribute('aria-label') || e.title, e.getBoundingClientRect()])
            .filter(([, r]) => r.width < 44 || r.height < 44).map(([name]) => name)""")
        if small:
            problems.append(f"header buttons under 44 px: {small}")
        contents = page.locator(".secondary-toggle:visible")
        if page.locator(".bd-toc-nav a").count():
            if contents.count() != 1:
                problems.append(f"{contents.count()} visible contents buttons, expected 1")
            else:
                contents.first.click()
                page.wait_for_timeout(300)
                toc = page.locator("#pst-secondary-sidebar-modal")
                if not page.evaluate("document.querySelector('#pst-secondary-sidebar-modal').open"):
                    problems.append("the contents button did not open the table of contents")
                elif not toc.locator(".bd-toc-nav a").first.is_visible():
                    problems.append("the open table of contents shows no links")
                page.keyboard.press("Escape")
                page.wait_for_timeout(150)
    else:
        sidebar = page.locator("#pst-primary-sidebar")
        if not sidebar.locator("nav a.reference").first.is_visible():
            return ["the sidebar's chapter links are not visible on a desktop"]
        toggle.click()
        page.wait_for_timeout(400)
        if sidebar.locator("nav a.reference").first.is_visible() and sidebar.bounding_box()["x"] >= 0:
            problems.append("☰ did not hide the sidebar")
        toggle.click()
        page.wait_for_timeout(400)
        if not sidebar.locator("nav a.reference").first.is_visible():
            problems.append("☰ did not show the sidebar again")
        toc = page.locator("#pst-secondary-sidebar .bd-toc-nav a")
        if toc.count() and not toc.first.is_visible():
            problems.append("the page's table of contents is not visible on a desktop")
    # Buttons that open the search dialog, and search fields in the page
    # (the search page's own; the dialog's is hidden until opened).
    searches = page.locator(".search-button__button:visible").count() + page.locator(
        "form.bd-search:visible"
    ).count()
    if searches != 1:
        problems.append(f"{searches} search controls visible, expected 1")
    return problems


@functools.lru_cache(maxsize=1)
def _icon_font_characters() -> dict[str, set[int]]:
    from fontTools.ttLib import TTFont

    fonts = {
        "Font Awesome 6 Free": HTML / "_static/vendor/fontawesome/fa-solid-900.woff",
        "Font Awesome 6 Brands": HTML / "_static/vendor/fontawesome/fa-brands-400.woff",
    }
    return {family: set(TTFont(f).getBestCmap()) for family, f in fonts.items()}


def check_icons(page, rec) -> list[str]:
    """The subset icon fonts hold every icon the page draws (each icon the
    theme draws from Font Awesome is checked against the font's characters),
    and the page fetches neither Font Awesome's script nor its full fonts,
    nor the ipywidgets manager (explorers are the book's own HTML)."""
    cmaps = _icon_font_characters()
    problems = []
    used = page.evaluate(
        """() => [...document.querySelectorAll('*')].flatMap(el => ['::before', '::after'].map(p => {
            const cs = getComputedStyle(el, p);
            if (!/Font Awesome/.test(cs.fontFamily) || !cs.content || cs.content === 'none') return null;
            return {family: cs.fontFamily, content: cs.content, where: el.className.toString().slice(0, 40)};
        })).filter(Boolean)"""
    )
    for u in used:
        family = next((f for f in cmaps if f in u["family"]), None)
        for ch in u["content"].strip('"'):
            if family is None:
                problems.append(f"{u['where']} draws from {u['family']}")
            elif ord(ch) not in cmaps[family]:
                problems.append(f"icon U+{ord(ch):04X} ({u['where']}) is missing from {family}")
    for url in rec.requests:
        if re.search(r"fontawesome\.js|fa-(solid|regular|brands)-\d+\.woff2|html-manager/", url):
            problems.append(f"fetched {url.removeprefix(rec.base)}")
    return sorted(set(problems))


def check_tables_and_overflow(page) -> list[str]:
    problems = [f"identifier split over two lines in a table: {w!r}" for w in page.evaluate(JS_SPLIT_NAMES)]
    o = page.evaluate(JS_OVERFLOW)
    if o["page"] > o["screen"]:
        problems.append(f"the page is {o['page']} px wide on a {o['screen']} px screen")
    for s in o["scrollers"]:
        if not s["cue"] or not s["mask"] or s["mask"] == "none":
            problems.append(f"{s['what']} ({s['text']!r}) scrolls sideways with no cue")
    return problems


def check_figures(page, layout: str) -> list[str]:
    """Every figure opens larger by a click and from its button with the
    keyboard, and closes with Esc and with its Close button."""
    problems = []
    figures = [h for h in page.query_selector_all(".bd-article img") if h.is_visible()]
    for img in figures:
        alt = (img.get_attribute("alt") or "")[:50]
        img.scroll_into_view_if_needed()
        shown = img.bounding_box()["width"]
        layout_width = img.evaluate(
            "i => parseFloat(i.getAttribute('width')) || (/px$/.test(i.style.width) && parseFloat(i.style.width)) || i.naturalWidth"
        )
        img.click()
        page.wait_for_timeout(100)
        if not _viewer_open(page):
            problems.append(f"figure {alt!r}: a click did not open it")
            continue
        big = page.locator("dialog.book-viewer img")
        opened = big.bounding_box()["width"]
        if opened <= shown + 1:
            problems.append(f"figure {alt!r}: opened at {opened:.0f} px, shown at {shown:.0f} px")
        if opened < layout_width - 1:
            problems.append(f"figure {alt!r}: opened at {opened:.0f} px, below its {layout_width:.0f} px size")
        wider = page.evaluate("(() => { const b = document.querySelector('dialog.book-viewer .book-viewer__body');"
                              " return [b.scrollWidth > b.clientWidth + 1, !!b.getAttribute('data-overflow'),"
                              " !document.querySelector('dialog.book-viewer .book-viewer__hint').hidden]; })()")
        if wider[0] and not (wider[1] and wider[2]):
            problems.append(f"figure {alt!r}: opened wider than the screen with no cue to scroll")
        if layout == "phone":
            text_px = page.evaluate(JS_SVG_TEXT_PX, [big.get_attribute("src"), opened])
            if text_px is not None and text_px < MIN_FIGURE_TEXT_PX - 0.01:
                problems.append(f"figure {alt!r}: opened on a phone, its smallest text is {text_px:.1f} px")
        # Esc closes it with the figure itself focused too (not only a button).
        big.click()
        page.keyboard.press("Escape")
        page.wait_for_timeout(100)
        if _viewer_open(page):
            problems.append(f"figure {alt!r}: Esc after a click on the opened figure did not close it")
            page.locator("dialog.book-viewer .book-viewer__close").click()
        # The keyboard way: the figure's own button (an explorer's sits below it).
        buttons = img.query_selector_all(
            "xpath=ancestor::*[contains(@class,'book-zoomable') or contains(@class,'book-explorer-area')][1]"
            "/button[contains(@class,'book-zoom')]"
        )
        if len(buttons) != 1:
            problems.append(f"figure {alt!r}: {len(buttons)} 'Full size' buttons")
            continue
        button = buttons[0]
        box = button.bounding_box()
        if layout == "phone" and (box["width"] < MIN_TOUCH_PX or box["height"] < MIN_TOUCH_PX):
            problems.append(f"figure {alt!r}: its button is {box['width']:.0f} x {box['height']:.0f} px")
        button.focus()
        page.keyboard.press("Enter")
        page.wait_for_timeout(100)
        if not _viewer_open(page):
            problems.append(f"figure {alt!r}: Enter on its button did not open it")
            continue
        # Focus is on the Close button: Enter there closes it, and focus goes
        # back to the button that opened it.
        if not page.evaluate("document.activeElement.matches('dialog.book-viewer .book-viewer__close')"):
            problems.append(f"figure {alt!r}: opened, focus is not on its Close button")
        page.keyboard.press("Enter")
        page.wait_for_timeout(100)
        if _viewer_open(page):
            problems.append(f"figure {alt!r}: its Close button did not close it")
            page.keyboard.press("Escape")
        elif not button.evaluate("b => b === document.activeElement"):
            problems.append(f"figure {alt!r}: focus did not return to its button")
    return problems


#: The blocks pydata-sphinx-theme makes tab stops while they scroll; book.js names them.
SCROLL_STOPS = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container"
#: Anything else book.js named "Scrollable ..." lost its own role (a lab tab, say).
JS_MISNAMED_AS_SCROLLABLE = f"""() => [...document.querySelectorAll('[aria-label^="Scrollable "]')]
  .filter(e => !e.matches('{SCROLL_STOPS}') || e.tabIndex !== 0)
  .map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))"""

JS_NAMELESS_TAB_STOPS = """() => [...document.querySelectorAll('#main-content [tabindex="0"]')]
  .filter(e => !e.matches('a[href], button, input, select, textarea, summary')
               && !(e.getAttribute('aria-label') || '').trim() && !e.getAttribute('aria-labelledby'))
  .map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))"""


def check_accessibility_tree(page) -> list[str]:
    """As loaded, before any scrolling: a screen reader finds every slider
    and every figure's button, off the screen too; no tab stop lacks a name."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = [n for n in cdp.send("Accessibility.getFullAXTree")["nodes"] if not n.get("ignored")]
    finally:
        cdp.detach()
    roles = [n.get("role", {}).get("value") for n in nodes]
    names = [(n.get("name") or {}).get("value") or "" for n in nodes]
    problems = []
    # The explorers' sliders and the lab's, less those of the lab's hidden panels.
    sliders = page.evaluate("[...document.querySelectorAll('input[type=range]')].filter(e => e.checkVisibility()).length")
    if roles.count("slider") != sliders:
        problems.append(f"{roles.count('slider')} of {sliders} sliders in the accessibility tree")
    zooms = page.locator("button.book-zoom").count()
    found = sum(1 for r, n in zip(roles, names) if r == "button" and n.startswith("Full size"))
    if found != zooms:
        problems.append(f"{found} of {zooms} 'Full size' buttons in the accessibility tree")
    problems += [f"a tab stop with no name: {e}" for e in page.evaluate(JS_NAMELESS_TAB_STOPS)]
    problems += [f"not a scrolling block, but named one: {e}" for e in page.evaluate(JS_MISNAMED_AS_SCROLLABLE)]
    return problems


def check_sliders(page, layout: str) -> list[str]:
    problems = []
    if page.locator('[title="null"]').count():
        problems.append(f"{page.locator('[title=null]').count()} elements have the hover text 'null'")
    sliders = page.locator(f"{EXPLORERS} {SLIDERS}")
    for s in range(sliders.count()):
        slider = sliders.nth(s)
        ident = slider.get_attribute("id")
        labels = page.locator(f'label[for="{ident}"]')
        label = labels.first.inner_text().strip() if labels.count() == 1 else None
        if not label:
            problems.append(f"slider {ident}: {labels.count()} labels")
            continue
        try:
            from playwright.sync_api import expect

            expect(slider).to_have_accessible_name(label, timeout=1000)
        except AssertionError:
            problems.append(f"slider {label!r}: not named {label!r}")
        # The readout shows the option's label ("64 B"); the slider must say
        # the same (a range input alone says the option's index).
        text = slider.get_attribute("aria-valuetext")
        readout = page.locator(f'output[for="{ident}"]')
        shown = readout.inner_text().strip() if readout.count() == 1 else None
        if not text or text != shown:
            problems.append(f"slider {label!r}: aria-valuetext {text!r}, readout {shown!r}")
        if layout == "phone":
            box = slider.bounding_box()
            if box["width"] < MIN_TOUCH_PX or box["height"] < MIN_TOUCH_PX:
                problems.append(f"slider {label!r}: its touch target is {box['width']:.0f} x {box['height']:.0f} px")
    return problems


def explorer_count_problems(explorers, path: str) -> list[str]:
    """The page shows as many explorers as its notebook builds."""
    notebook = REPO / Path(path).with_suffix(".ipynb")
    expected = _explorers_built(notebook) if notebook.exists() else 0
    if explorers.count() != expected:
        return [f"{explorers.count()} explorers on the page, {expected} in the notebook"]
    return []


def check_explorers(page, path: str) -> list[str]:
    """Each explorer shows sliders and a figure; moving each slider with the
    keyboard changes the figure and the slider's value text, and the new
    figure's alt text names the new value (where the old one named the old)."""
    problems = []
    explorers = page.locator(EXPLORERS)
    problems += explorer_count_problems(explorers, path)
    for i in range(explorers.count()):
        explorer = explorers.nth(i)
        if not explorer.get_attribute("data-book-explorer"):
            problems.append(f"explorer {i}: book.js did not wire it")
        sliders = explorer.locator(SLIDERS)
        if sliders.count() == 0 or not sliders.first.is_visible():
            problems.append(f"explorer {i}: no visible slider")
            continue
        figure = explorer.locator("img.vsock-explorer-figure")
        if figure.count() != 1 or not figure.is_visible():
            problems.append(f"explorer {i}: {figure.count()} figures, expected one visible")
            continue
        for s in range(sliders.count()):
            slider = sliders.nth(s)
            before, alt_before = figure.get_attribute("src"), figure.get_attribute("alt")
            said = slider.get_attribute("aria-valuetext")
            at_end = slider.input_value() == slider.get_attribute("max")
            slider.focus()
            page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            page.wait_for_timeout(50)
            after, alt_after = figure.get_attribute("src"), figure.get_attribute("alt")
            now = slider.get_attribute("aria-valuetext")
            label = page.locator(f'label[for="{slider.get_attribute("id")}"]').inner_text()
            if after == before:
                problems.append(f"explorer {i}: moving slider '{label}' did not change the figure")
            elif now == said:
                problems.append(f"explorer {i}: slider '{label}' moved but still says {said!r}")
            elif said in alt_before and now not in alt_after:
                problems.append(f"explorer {i}: slider '{label}' at {now!r} shows the figure {alt_after!r}")
    return problems


# ---------------------------------------------------------------------- tests


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("path", PAGES)
def test_page(site, browser, path, layout):
    rec = PageRecorder(browser, site, layout)
    try:
        page = rec.open(path)
        problems: list[str] = []
        theme = page.evaluate("document.documentElement.dataset.theme")
        if theme != LAYOUTS[layout]["mode"]:
            problems.append(f"theme is {theme!r}, expected {LAYOUTS[layout]['mode']!r}")

        for img in page.evaluate(JS_IMAGES):
            if not img["complete"] or img["width"] == 0:
                problems.append(f"image failed to load: {img['src']}")
            if not (img["alt"] or "").strip():
                problems.append(f"image without alt text: {img['src']}")

        explorers = page.locator(EXPLORERS).count()

        # Sizes first: the checks below only add data: and cached requests.
        limit = MAX_EXPLORER_PAGE_BYTES if explorers or path in INTERACTIVE_PAGES else MAX_TEXT_PAGE_BYTES
        SIZES.setdefault(path, {}).update({
            "transferred_bytes": rec.transferred,
            "runtime_bytes": rec.runtime_bytes,
            "own_bytes": rec.own_bytes,
            "requests": len(rec.requests),
            "limit_bytes": limit,
        })
        if rec.transferred > limit:
            problems.append(f"page transferred {rec.transferred / 1e3:.0f} KB gzip (limit {limit / 1e3:.0f} KB)")

        problems += check_accessibility_tree(page)
        problems += check_icons(page, rec)
        problems += check_tables_and_overflow(page)
        problems += check_sliders(page, layout)
        problems += check_figures(page, layout)
        problems += check_explorers(page, path)
        problems += check_navigation(page, layout)

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"{_slug(path)}-{layout}-{LAYOUTS[layout]['mode']}.png"), full_page=True)

        problems += [f"blocked external request: {u}" for u in rec.blocked]
        problems += rec.errors
        assert not problems, f"{path} ({layout}):\n  " + "\n  ".join(problems)
    finally:
        rec.close()


@pytest.mark.parametrize("path", PAGES)
def test_page_without_javascript(site, browser, path):
    """Scripts off: each explorer shows its first figure and says why it has
    no sliders; the page still fits a phone."""
    rec = PageRecorder(browser, site, "phone", javascript=False)
    try:
        page = rec.open(path, javascript=False)
        problems: list[str] = []
        # Chromium refuses the theme's script preloads when scripts are off.
        rec.errors = [e for e in rec.errors if not e.endswith("(csp)")]
        explorers = page.locator(EXPLORERS)
        problems += explorer_count_problems(explorers, path)
        for i in range(explorers.count()):
            explorer = explorers.nth(i)
            img = explorer.locator("img")
            if img.count() != 1 or not img.is_visible():
                problems.append(f"explorer {i}: no visible image without JavaScript")
                continue
            info = img.evaluate("i => ({w: i.naturalWidth, h: i.getBoundingClientRect().height, alt: i.alt})")
            if info["w"] == 0 or info["h"] < 50 or not info["alt"].strip():
                problems.append(f"explorer {i}: its image without JavaScript is {info}")
            note = explorer.locator(".vsock-explorer-nojs")
            if not note.count() or not note.first.is_visible() or "need JavaScript" not in note.first.text_content():
                problems.append(f"explorer {i}: no line saying the sliders need JavaScript")
            else:
                # The line names the setting the image shows, as its alt text does.
                shown = [c["label"] + " " + c["options"][int(v)] for c, v in zip(
                    json.loads(explorer.locator("script.vsock-explorer-grid").text_content())["controls"],
                    [s.get_attribute("value") for s in explorer.locator(SLIDERS).all()])]
                if not all(s in note.first.text_content() for s in shown):
                    problems.append(f"explorer {i}: its line does not say it shows {', '.join(shown)}")
            if explorer.locator(SLIDERS).first.is_visible():
                problems.append(f"explorer {i}: shows sliders that cannot work without JavaScript")
        width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        if width[0] > width[1]:
            problems.append(f"the page is {width[0]} px wide on a {width[1]} px screen")
        # Every control of the sticky header needs scripts: an empty bar (or a
        # see-through one) would only hide the text scrolling under it.
        header = page.locator(".bd-header-article")
        if header.count() and header.is_visible():
            problems.append(f"an empty header bar {header.bounding_box()['height']:.0f} px high covers the text")
        problems += [f"blocked external request: {u}" for u in rec.blocked]
        problems += rec.errors
        assert not problems, f"{path} (no JavaScript):\n  " + "\n  ".join(problems)
    finally:
        rec.close()


def test_explorer_after_the_back_button_shows_the_figure_its_sliders_say(site, browser):
    """A page opened again from the history: slider, readout and figure agree."""
    rec = PageRecorder(browser, site, "phone")
    try:
        page = rec.open("chapters/01-skbuff.html")
        explorer = page.locator(EXPLORERS).first
        slider = explorer.locator(SLIDERS).first
        start = slider.input_value()
        slider.focus()
        page.keyboard.press("End")
        assert slider.input_value() != start
        page.goto(site + "book/glossary.html", wait_until="load")
        page.go_back(wait_until="load")
        explorer = page.locator(EXPLORERS).first
        slider = explorer.locator(SLIDERS).first
        said = slider.get_attribute("aria-valuetext")
        assert explorer.locator("output").first.inner_text() == said
        grid = json.loads(explorer.locator("script.vsock-explorer-grid").text_content())
        assert said == grid["controls"][0]["options"][int(slider.input_value())]
        assert said in explorer.locator("img.vsock-explorer-figure").get_attribute("alt")
        assert not rec.errors, rec.errors
    finally:
        rec.close()


def test_front_door_leads_to_the_first_page(site, browser):
    """The site's root is a whole page (language, title, a link) that opens
    the book's first page."""
    root = (BUILD / "html" / "index.html").read_text(encoding="utf-8")
    assert root.startswith("<!DOCTYPE html>") and '<html lang="en">' in root and "<title>" in root
    assert '<a href="book/intro.html">' in root
    rec = PageRecorder(browser, site, "phone")
    try:
        page = rec.open("")
        page.wait_for_url("**/book/intro.html")
        assert not rec.errors, rec.errors
    finally:
        rec.close()


def test_a_table_a_little_too_wide_stays_a_table_on_a_laptop(site, browser):
    """Chapter 2's step table: at 1280 px a table that fits its column (set
    tighter), with no name split; cards only on a phone, where it cannot fit."""
    found = {}
    for layout in ("desktop", "phone"):
        rec = PageRecorder(browser, site, layout)
        try:
            page = rec.open("chapters/02-per-packet-locking.html")
            table = page.locator(".bd-article table", has_text="take the used buffer").first
            page.wait_for_timeout(300)                 # book.js fits tables once laid out
            found[layout] = table.evaluate("""t => ({classes: t.className,
                fits: t.getBoundingClientRect().width <= t.parentNode.clientWidth + 1,
                display: getComputedStyle(t).display})""")
            if layout == "desktop":
                assert page.evaluate(JS_SPLIT_NAMES) == []
        finally:
            rec.close()
    assert "book-cards" not in found["desktop"]["classes"] and found["desktop"]["display"] == "table", found
    assert found["desktop"]["fits"], found
    assert "book-cards" in found["phone"]["classes"], found


def test_an_explorer_opened_full_size_on_a_phone_brings_its_sliders(site, browser):
    """At 390 px the full-size viewer shows the explorer's sliders; moving one
    changes the big figure; closing puts the sliders back under the figure."""
    rec = PageRecorder(browser, site, "phone")
    try:
        page = rec.open("chapters/03-batched-rx.html")
        explorer = page.locator(EXPLORERS).first
        explorer.scroll_into_view_if_needed()
        box_id = explorer.get_attribute("id")
        page.locator(f"#{box_id} ~ .book-zoom").first.click()
        viewer = page.locator("dialog.book-viewer")
        page.wait_for_function("document.querySelector('dialog.book-viewer').open")
        sliders = viewer.locator(SLIDERS)
        assert sliders.count() > 0 and sliders.first.is_visible(), "no sliders in the viewer"
        big = viewer.locator(".book-viewer__body img")
        before = big.get_attribute("src")
        sliders.first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(50)
        assert big.get_attribute("src") != before, "moving a slider in the viewer left the figure"
        small = page.locator(f"#{box_id} img.vsock-explorer-figure")
        assert big.get_attribute("src") == small.get_attribute("src")
        assert big.get_attribute("alt") == small.get_attribute("alt")
        viewer.locator(".book-viewer__close").click()
        assert page.locator(f"#{box_id} .vsock-explorer__sliders {SLIDERS}").count() > 0, "sliders not returned"
        assert viewer.locator(SLIDERS).count() == 0
        assert not rec.errors, rec.errors
    finally:
        rec.close()


def test_the_back_button_from_the_lab_keeps_the_explorers_positions(site, browser):
    """Chapter 3, a slider moved, its lab link followed, then Back: the
    explorer is where the reader left it, figure and all."""
    rec = PageRecorder(browser, site, "desktop")
    try:
        page = rec.open("chapters/03-batched-rx.html")
        explorer = page.locator(EXPLORERS).first
        sliders = explorer.locator(SLIDERS)
        for k in range(sliders.count()):
            sliders.nth(k).focus()
            page.keyboard.press("End")
        chosen = [sliders.nth(k).input_value() for k in range(sliders.count())]
        figure = explorer.locator("img.vsock-explorer-figure").get_attribute("src")
        explorer.locator(".vsock-lab-link a").click()
        page.wait_for_url("**/book/lab.html#*")
        page.go_back(wait_until="load")
        page.wait_for_function(f"() => document.querySelector('{EXPLORERS}').dataset.bookExplorer")
        explorer = page.locator(EXPLORERS).first
        sliders = explorer.locator(SLIDERS)
        assert [sliders.nth(k).input_value() for k in range(sliders.count())] == chosen
        assert explorer.locator("img.vsock-explorer-figure").get_attribute("src") == figure
    finally:
        rec.close()


@pytest.mark.parametrize("old, new", [
    ("chapters/05-measuring.html", "chapters/06-measuring.html"),
    ("chapters/05-measuring.html#ch5-priors", "chapters/06-measuring.html#ch6-priors"),
    ("chapters/05-measuring.html#the-report-card", "chapters/06-measuring.html#the-report-card"),
    ("chapters/04-metadata-slots.html#deferred-notifications-patches-4-and-5",
     "chapters/05-notification-deferral.html#deferred-notifications-patches-4-and-5"),
    ("chapters/04-metadata-slots.html#ch4-ex-wake-ups", "chapters/05-notification-deferral.html#ch5-ex-wake-ups"),
    ("chapters/04-metadata-slots.html#running-the-scenario", "chapters/04-metadata-slots.html#running-the-scenario"),
])
def test_old_addresses_land_where_their_content_went(site, browser, old, new):
    rec = PageRecorder(browser, site, "desktop")
    try:
        page = rec.open(old)
        page.wait_for_url("**/" + new.split("/")[-1].split("#")[0] + "*")
        page.wait_for_load_state("load")
        assert page.url == site + new, page.url
        anchor = new.partition("#")[2]
        if anchor:
            assert page.locator(f"[id='{anchor}']").count() == 1, anchor
        # The old page leaves before its own scripts have loaded: those requests are
        # aborted by the navigation, not failed (a missing file is an HTTP error).
        errors = [e for e in rec.errors if "net::ERR_ABORTED" not in e]
        assert not errors, errors
    finally:
        rec.close()
