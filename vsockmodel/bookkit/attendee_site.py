"""The attendees' copy of the built book: the same site without the answer keys.

The online book keeps its answer keys for self-learners. A workshop bundle
moves them out of the site the room is served (``split(site, private)``):
the answer keys' page and its notebook go to the instructor's folder, which
the room's server sends only to the instructor's browser; every link to them
in the attendees' pages (the sidebar, previous/next, the text) becomes plain
text, and the search index forgets the page.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from bs4 import BeautifulSoup

#: The instructor-only pages, as Sphinx names them (docnames).
PRIVATE_DOCS = ("book/instructor/answer-keys",)


def private_files(site: Path, docs=PRIVATE_DOCS) -> list[Path]:
    """The built files of the private pages: the page, and its notebook or source as downloaded."""
    found = []
    for doc in docs:
        for pattern in (f"{doc}.html", f"{doc}.ipynb", f"_sources/{doc}.*"):
            found += sorted(site.glob(pattern))
    return found


def _is_private(href: str, docs=PRIVATE_DOCS) -> bool:
    path = href.split("#", 1)[0].split("?", 1)[0]
    return any(path.endswith(Path(d).name + ".html") or path.endswith(Path(d).name + ".ipynb") for d in docs)


def strip_links(page_html: str, docs=PRIVATE_DOCS) -> str:
    """A page with every link to a private page gone: navigation entries removed, links in the text
    turned into their text."""
    names = [Path(d).name for d in docs]
    if not any(n in page_html for n in names):
        return page_html
    soup = BeautifulSoup(page_html, "html.parser")
    for a in soup.find_all("a", href=True):
        if not _is_private(a["href"], docs):
            continue
        item = a.find_parent("li")
        if item is not None and a.find_parent("nav") is not None:
            item.decompose()                              # the sidebar's entry
        elif {"prev-next-footer", "left-prev", "right-next"} & set(a.get("class") or []):
            a.decompose()                                 # previous / next
        elif a.find_parent(class_="prev-next-area") is not None:
            a.decompose()
        else:
            a.unwrap()                                    # a link in the text: its words stay
    for link in soup.find_all("link", href=True):
        if _is_private(link["href"], docs):
            link.decompose()                              # <link rel="next" href="...">
    return str(soup)


def strip_search_index(text: str, docs=PRIVATE_DOCS) -> str:
    """searchindex.js without the private pages: no word, title or index entry leads there."""
    m = re.match(r"^(Search\.setIndex\()(.*)(\)\s*;?\s*)$", text, re.S)
    if not m:
        return text
    index = json.loads(m.group(2))
    hidden = {i for i, name in enumerate(index.get("docnames", [])) if name in docs}
    if not hidden:
        return text

    def keep(value):
        if isinstance(value, int):
            return None if value in hidden else value
        if isinstance(value, list):
            kept = [v for v in value if not (isinstance(v, int) and v in hidden)
                    and not (isinstance(v, list) and v and isinstance(v[0], int) and v[0] in hidden)]
            return kept or None
        return value

    for table in ("terms", "titleterms", "alltitles"):
        if table in index:
            index[table] = {k: v for k, v in ((k, keep(v)) for k, v in index[table].items()) if v is not None}
    for i in hidden:
        index["titles"][i] = ""
        index["docnames"][i] = ""
        index["filenames"][i] = ""
    return m.group(1) + json.dumps(index, separators=(",", ":")) + m.group(3)


def split(site: Path, private: Path, docs=PRIVATE_DOCS) -> list[Path]:
    """Move the private pages from ``site`` to ``private`` (same layout) and strip every link to them;
    returns the files moved (their new paths)."""
    moved = []
    for f in private_files(site, docs):
        target = private / f.relative_to(site)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(f), target)
        moved.append(target)
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = strip_links(text, docs)
        if new != text:
            page.write_text(new, encoding="utf-8")
    index = site / "searchindex.js"
    if index.is_file():
        index.write_text(strip_search_index(index.read_text(encoding="utf-8"), docs), encoding="utf-8")
    return moved
