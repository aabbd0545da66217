"""The printed edition, start to end: print every page, then the front
matter, then join them (see the package's docstring)."""

from __future__ import annotations

import datetime
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ... import __version__
from .. import citation
from . import front
from .assemble import Joiner, Part, read_part
from .chromium import Printer, serve
from .toc import Doc, book_docs


@dataclass(frozen=True)
class Paper:
    name: str
    width_mm: float
    height_mm: float


PAPERS = {"a4": Paper("A4", 210, 297), "letter": Paper("US Letter", 215.9, 279.4)}
#: Page margins (top, right, bottom, left), mm; the running header and footer sit in them.
MARGINS_MM = (18, 17, 20, 17)
#: Page numbers a page's counter style spells out (more than any page of the book prints on).
MAX_PAGES_PER_DOC = 400
LICENCE = "CC BY 4.0"


def pdf_name(version: str, paper: str) -> str:
    """``vsock-rx-book-0.3.0.pdf`` (A4), ``vsock-rx-book-0.3.0-letter.pdf``."""
    return f"vsock-rx-book-{version}{'' if paper == 'a4' else '-' + paper}.pdf"


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def page_css(paper: Paper, footer: str, running_title: str = "", first_number: Optional[int] = None) -> str:
    """The paper, the running header and footer, and the page number.

    A book page's number goes on through the book: Chromium counts each
    printed page from 1, so a fixed counter style spells page k as
    ``first_number + k - 1``. Without ``first_number`` (the front matter) pages
    are numbered i, ii, ... and the first (the title page) carries none."""
    top, right, bottom, left = MARGINS_MM
    small = "font: 8pt 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; color: #555;"
    if first_number is None:
        counter, style, first = "lower-roman", "", "@bottom-right { content: none; }"
    else:
        numbers = " ".join(f'"{first_number + k}"' for k in range(MAX_PAGES_PER_DOC))
        counter, style, first = "book-page", f"@counter-style book-page {{ system: fixed; symbols: {numbers}; }}", ""
    return f"""{style}
@page {{
  size: {paper.width_mm}mm {paper.height_mm}mm;
  margin: {top}mm {right}mm {bottom}mm {left}mm;
  @top-right {{ content: {_css_string(running_title)}; {small} }}
  @bottom-left {{ content: {_css_string(footer)}; {small} }}
  @bottom-right {{ content: counter(page, {counter}); {small} }}
}}
@page :first {{ @top-right {{ content: none; }} {first} }}
"""


def text_width_px(paper: Paper) -> int:
    """The width of the paper's text area in CSS pixels (96 per inch)."""
    return int((paper.width_mm - MARGINS_MM[1] - MARGINS_MM[3]) / 25.4 * 96)


def _contents(parts: list[Part]) -> list[front.Entry]:
    """The contents list: each part's caption, its pages, and a numbered chapter's sections."""
    entries, caption = [], None
    for part in parts:
        first = part.start + 1
        if part.doc.part and part.doc.part != caption:
            caption = part.doc.part
            entries.append(front.Entry(caption, first, 0))
        entries.append(front.Entry(part.doc.title, first, 1))
        if part.doc.numbered:
            for h in part.headings:
                if h["level"] == 2 and h["id"] in part.dests:
                    entries.append(front.Entry(h["text"], first + part.dests[h["id"]][0], 2))
    return entries


def _today() -> datetime.date:
    """The build's date (``SOURCE_DATE_EPOCH`` when set, for a reproducible title page)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).date()
    return datetime.date.today()


def build(site: Path, toc: Path, out_dir: Path, paper: str = "a4",
          log=print, cff: Optional[dict] = None) -> Path:
    """Print the built book at ``site`` to ``out_dir``; returns the PDF's path."""
    if paper not in PAPERS:
        raise ValueError(f"paper: {paper!r} is not a paper size; allowed: {', '.join(PAPERS)}")
    t0 = time.perf_counter()
    sheet = PAPERS[paper]
    cff = cff or citation.load()
    title, abstract = cff["title"], " ".join(str(cff.get("abstract", "")).split())
    authors = ", ".join(a.get("name") or f"{a.get('given-names', '')} {a['family-names']}".strip()
                        for a in cff["authors"])
    footer = f"{title} · version {__version__} · {LICENCE}"
    docs: list[Doc] = book_docs(site, toc)

    parts: list[Part] = []
    clipped: list[str] = []
    with serve(site) as base:
        printer = Printer(base, sheet.width_mm, sheet.height_mm, text_width_px(sheet))
        try:
            number = 1
            for doc in docs:
                printed = printer.print_page(doc.html, page_css(sheet, footer, doc.title, number))
                part = read_part(printed.pdf, doc, printed.headings)
                part.start = number - 1
                parts.append(part)
                clipped += [f"{doc.html}: {c}" for c in printed.clipped]
                number += part.pages
            date = _today()
            edition = front.Edition(title, authors, __version__, f"{date.day} {date:%B %Y}", sheet.name)
            html = front.front_matter(edition, abstract, _contents(parts), page_css(sheet, footer))
            front_part = read_part(printer.print_html(html))
        finally:
            printer.close()
    if clipped:
        raise RuntimeError("the printed edition would cut these off at the paper's edge:\n  "
                           + "\n  ".join(clipped))

    joiner = Joiner([front_part, *parts], base)
    joiner.link()
    joiner.outline()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / pdf_name(__version__, paper)
    tmp = target.with_suffix(".partial")
    with open(tmp, "wb") as fh:
        joiner.write(fh, {
            "/Title": f"{title} (version {__version__})",
            "/Author": authors,
            "/Subject": abstract,
            "/Keywords": ", ".join(cff.get("keywords", [])),
            "/Creator": "vsockmodel.bookkit.printed",
            "/Rights": f"Text and figures {LICENCE}; code MIT; quoted kernel source GPL-2.0",
        }, front_pages=front_part.pages)
    tmp.replace(target)
    pages = len(joiner.writer.pages)
    log(f"{target.name}: {pages} pages ({front_part.pages} front), {sheet.name}, "
        f"{target.stat().st_size / 1e6:.1f} MB, in {time.perf_counter() - t0:.0f} s")
    return target
