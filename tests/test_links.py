"""Links in the built HTML: every internal link and anchor resolves; the pages
load nothing from the network (no remote script/stylesheet/image sources).

Parsed with html.parser; nothing is fetched.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from book_support import HTML, book_pages, ensure_book_built

# (tag, attribute) pairs that make the browser load something.
LOADS = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
         ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src"),
         ("object", "data")}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attr, url)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for attr in ("href", "src", "data"):
            if attrs.get(attr) is not None:
                self.refs.append((tag, attr, attrs[attr]))


_CACHE: dict[Path, _Page] = {}


def _parse(path: Path) -> _Page:
    if path not in _CACHE:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        _CACHE[path] = page
    return _CACHE[path]


@pytest.fixture(scope="module")
def html_root() -> Path:
    return ensure_book_built()


def _html_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if "_static" not in p.parts)


def test_every_toc_page_was_built(html_root):
    missing = [p for p in book_pages() if not (html_root / p).is_file()]
    assert not missing, f"pages missing from the build: {missing}"


def test_internal_links_and_anchors_resolve(html_root):
    broken = []
    lab = (html_root / "book" / "lab.html").resolve()
    for page_path in _html_files(html_root):
        page = _parse(page_path)
        for tag, attr, url in page.refs:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue  # external (checked below for loads) or data:/mailto:
            if not parts.path and not parts.fragment:
                continue
            target = page_path if not parts.path else (page_path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            rel = page_path.relative_to(html_root)
            if not target.exists():
                broken.append(f"{rel}: <{tag} {attr}={url!r}>: no such file")
                continue
            if parts.fragment and target.name == "lab.html" and "=" in parts.fragment:
                continue  # the lab's settings (an explorer's link), not an anchor
            if parts.fragment and target.suffix == ".html":
                if target == lab and "=" in parts.fragment:
                    continue  # the lab's state (lab.js readHash), not an anchor; test_instructor checks its keys
                if unquote(parts.fragment) not in _parse(target).ids:
                    broken.append(f"{rel}: <{tag} {attr}={url!r}>: no anchor #{parts.fragment}")
    assert not broken, "broken internal links:\n  " + "\n  ".join(broken)


def test_no_page_loads_anything_from_the_network(html_root):
    remote = []
    for page_path in _html_files(html_root):
        for tag, attr, url in _parse(page_path).refs:
            scheme = urlsplit(url).scheme
            if (tag, attr) in LOADS and (scheme in ("http", "https") or url.startswith("//")):
                if tag == "link" and attr == "href" and _is_plain_link(page_path, url):
                    continue
                remote.append(f"{page_path.relative_to(html_root)}: <{tag} {attr}={url!r}>")
    assert not remote, "pages would load from the network:\n  " + "\n  ".join(remote)


def _is_plain_link(page_path: Path, url: str) -> bool:
    # <link rel="canonical|next|prev"> does not load anything; stylesheets,
    # preloads and icons do. The parser keeps no rel, so re-check the tag text.
    text = page_path.read_text(encoding="utf-8")
    i = text.find(url)
    start = text.rfind("<link", 0, i)
    tag = text[start:i]
    return 'rel="canonical"' in tag or 'rel="next"' in tag or 'rel="prev"' in tag


def test_notebook_downloads_exist(html_root):
    """The download button offers the .ipynb source of every notebook page."""
    for page in book_pages():
        source = Path(page).with_suffix(".ipynb")
        if (html_root.parent.parent / source).exists():
            assert (html_root / "_sources" / source).is_file(), f"_sources/{source} missing"


# ---- what a reader of the built pages is told -----------------------------------------------

class _Images(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.alts: list[tuple[str, str]] = []      # (src, alt)

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            attrs = dict(attrs)
            self.alts.append(((attrs.get("src") or "")[:60], attrs.get("alt") or ""))


_PATHLIKE = re.compile(r"(_images/|\.(svg|png|jpe?g|gif|webp)$|^\.\./|^[\w./-]+\.\w{2,4}$)", re.I)


def test_no_image_alt_text_is_a_file_name(html_root):
    """An image's alt text describes it; a bare file name (what Sphinx writes
    for an output with no description) says nothing."""
    bad = []
    for page_path in _html_files(html_root):
        parser = _Images()
        parser.feed(page_path.read_text(encoding="utf-8"))
        for src, alt in parser.alts:
            if not alt.strip() or _PATHLIKE.search(alt.strip()):
                bad.append(f"{page_path.relative_to(html_root)}: <img src={src!r}> alt={alt[:60]!r}")
    assert not bad, "images whose alt text is empty or a file name:\n  " + "\n  ".join(bad)


def test_old_addresses_are_pages_that_lead_on(html_root):
    """chapters/05-measuring.html was the measuring chapter: a whole page that
    sends the reader to chapter 6 (a refresh and a link, for no scripts), and
    chapter 4's moved sections are followed to chapter 5."""
    stub = (html_root / "chapters" / "05-measuring.html").read_text(encoding="utf-8")
    assert stub.startswith("<!DOCTYPE html>") and '<meta http-equiv="Refresh" content="0; url=06-measuring.html">' in stub
    assert '<a href="06-measuring.html">How the numbers were measured</a>' in stub
    assert '"ch5-priors": "ch6-priors"' in stub
    ch4 = (html_root / "chapters" / "04-metadata-slots.html").read_text(encoding="utf-8")
    assert '"deferred-notifications-patches-4-and-5": "05-notification-deferral.html#deferred-notifications-patches-4-and-5"' in ch4
    assert "05-notification-deferral.html" not in (html_root / "chapters" / "03-batched-rx.html").read_text(
        encoding="utf-8").split("<body")[0], "only the page that lost sections carries the script"


def _text(html_root: Path, page: str) -> str:
    """A built page's words: no scripts, styles or tags, spaces collapsed."""
    import html as _html

    text = (html_root / page).read_text(encoding="utf-8")
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    return " ".join(_html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def test_the_introduction_gives_both_test_beds_at_64_kib(html_root):
    """v1 measured no gain at 64 KiB, v2 a large one: the introduction says both."""
    from vsockmodel.study import measurements

    text = _text(html_root, "book/intro.html")
    v1 = measurements.change("v1_all_fixed64k")[65536]
    v2, v2_p13 = measurements.change("v2_all_fixed64k")[65536], measurements.change("v2_p1p3_fixed64k")[65536]
    for number in (f"{v1[0]:+.1f} %", f"{v2[0]:+.1f} %", f"[{v2[1]:+.1f}, {v2[2]:+.1f}]", f"{v2_p13[0]:+.1f} %"):
        assert number in text, number
    # "gone at 64 KiB" is true of the first test bed only, and says so where it is said.
    for m in re.finditer("gone at 64 KiB", text):
        assert "first test bed" in text[max(0, m.start() - 80):m.start()], text[m.start() - 80:m.end()]


def test_the_intro_s_first_figure_gives_the_64_b_and_4_kib_gains_model_and_measured(html_root):
    """The book's question in its first figure: the patches' gain at 64 B beside
    the one at 4 KiB, the model's and the measured, in the alt text too."""
    import html as _html

    from vsockmodel.bookkit.figures import model_gains
    from vsockmodel.study import measurements

    page = (html_root / "book/intro.html").read_text(encoding="utf-8")
    article = page[page.index('<article class="bd-article"'):]
    alt = _html.unescape(re.search(r'<img\b[^>]*\balt="([^"]*)"', article).group(1))
    model = model_gains("baseline", "p1-p5", seeds=range(1, 5))
    measured = measurements.change("v1_all_fixed64k")
    for size, p in (("64 B", 64), ("4 KiB", 4096)):
        m = re.search(rf"At {size} the model's (?:gain )?is ([+-]\d+) % and the measured ([+-][\d.]+) %", alt,
                      re.I)
        assert m, f"no {size} gains in the alt text: {alt!r}"
        assert m.group(1) == f"{model[p][0]:+.0f}" and m.group(2) == f"{measured[p][0]:+.1f}", (size, m.groups())


def test_the_pairs_explorer_takes_its_pairs_to_the_lab(html_root):
    """Chapter 6's AB/BA explorer: each figure's lab link carries its number of
    pairs (the lab's "pairs (seeds)"), and its note does not say the lab lacks it."""
    import json as _json
    from urllib.parse import parse_qs

    page = (html_root / "chapters" / "06-measuring.html").read_text(encoding="utf-8")
    grids = [_json.loads(g.replace("<\\/", "</")) for g in
             re.findall(r'<script type="application/json" class="vsock-explorer-grid">(.*?)</script>', page, re.S)]
    grid = next(g for g in grids if [c["name"] for c in g["controls"]] == ["pairs", "noise"])
    pairs, noise = (c["options"] for c in grid["controls"])
    for i, figure in enumerate(grid["figures"]):
        settings = parse_qs(urlsplit(figure["lab"]).fragment)
        assert settings["pairs"] == [pairs[i // len(noise)]] and settings["mode"] == ["compare"], figure["lab"]
    assert "no AB/BA pairs" not in page and "(it has no host noise setting)" in page


def test_every_markdown_table_a_cell_prints_is_a_table(html_root):
    # A code cell's Markdown output is parsed as CommonMark unless the cell asks for
    # MyST (metadata mystnb.markdown_format): a table would print as "| a | b |" text.
    raw = [f"{path.relative_to(html_root)}: {line.strip()[:60]}"
           for path in _html_files(html_root)
           for line in path.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("<p>| ")]
    assert raw == [], raw
