"""The printed edition's pages: ``_toc.yml`` order, parts, and each page's
title as its built HTML shows it (chapter number included)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml
from bs4 import BeautifulSoup


@dataclass
class Doc:
    """One page of the book, in the order the table of contents gives."""

    name: str                  # docname, e.g. chapters/03-batched-rx
    part: Optional[str]        # the part's caption, or None (the root page)
    numbered: bool             # a numbered chapter (its sections go in the contents)
    title: str = ""            # from the built page: "3. Batching the receive path"

    @property
    def html(self) -> str:
        return f"{self.name}.html"


def read_toc(toc: Path) -> list[Doc]:
    """Every page of ``_toc.yml`` (jb-book format), the root first."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    docs = [Doc(_docname(data["root"]), None, False)]

    def walk(entries, part, numbered):
        for entry in entries or []:
            if "file" in entry:
                docs.append(Doc(_docname(entry["file"]), part, numbered))
            walk(entry.get("sections"), part, numbered)

    for part in data.get("parts", []):
        walk(part.get("chapters"), part.get("caption"), bool(part.get("numbered")))
    walk(data.get("chapters"), None, False)
    return docs


def _docname(entry: str) -> str:
    return re.sub(r"\.(md|ipynb|rst)$", "", entry)


def page_title(page: Path) -> str:
    """A built page's title: its first heading, with its number, without the "#" link."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.bd-article") or soup
    h1 = article.find("h1")
    if h1 is None:
        raise ValueError(f"{page}: no <h1> in the article")
    for a in h1.select("a.headerlink"):
        a.decompose()
    return " ".join(h1.get_text().split())


def book_docs(site: Path, toc: Path) -> list[Doc]:
    """The pages to print, with their titles; a page missing from the build is an error."""
    docs = read_toc(toc)
    for doc in docs:
        page = site / doc.html
        if not page.is_file():
            raise FileNotFoundError(f"{page} is missing: build the book first (scripts/build-book)")
        doc.title = page_title(page)
    return docs
