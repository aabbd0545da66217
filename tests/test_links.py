"""Links in the built HTML: every internal link and anchor resolves; the pages
load nothing from the network (no remote script/stylesheet/image sources).

Parsed with html.parser; nothing is fetched.
"""

from __future__ import annotations

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
