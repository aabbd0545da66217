"""The printed edition's front matter: a title page and the contents list.

One HTML document, printed by Chromium like the pages. Its pages are
numbered i, ii, ... (the book's own pages start at 1); the contents list
gives each page's (and each numbered chapter's sections') first page.
"""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass
class Entry:
    """A line of the contents list."""

    title: str
    page: int                  # printed page number (the book's pages count from 1)
    level: int                 # 0: a part's caption, 1: a page, 2: a chapter's section


@dataclass
class Edition:
    """What the title page says."""

    title: str
    authors: str
    version: str
    date: str                  # "6 December 2026"
    paper: str                 # "A4"


_STYLE = """
html { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #111; font-size: 11pt; }
body { margin: 0; }
.title-page { height: 240mm; display: flex; flex-direction: column; break-after: page; }
.title-page h1 { font-size: 30pt; line-height: 1.15; margin: 40mm 0 6mm; font-weight: 600; }
.title-page .subtitle { font-size: 14pt; color: #333; margin: 0 0 14mm; max-width: 140mm; }
.title-page .authors { font-size: 13pt; margin: 0 0 3mm; }
.title-page .edition { font-size: 11pt; color: #333; margin: 0; }
.title-page .licence { margin-top: auto; font-size: 9pt; color: #333; line-height: 1.45; }
.title-page .licence p { margin: 0 0 2.5mm; }
h2 { font-size: 18pt; font-weight: 600; margin: 0 0 6mm; }
ol { list-style: none; margin: 0; padding: 0; }
li { break-inside: avoid; }
.entry { display: flex; align-items: baseline; gap: 2mm; margin: 0 0 1.6mm; }
.entry .leader { flex: 1; border-bottom: 1px dotted #888; transform: translateY(-1mm); }
.entry .page { font-variant-numeric: tabular-nums; }
.level-0 { font-weight: 600; margin-top: 5mm; break-after: avoid; }
.level-1 .entry { font-size: 11pt; }
.level-2 .entry { font-size: 9.5pt; color: #333; margin-left: 9mm; }
a { color: inherit; text-decoration: none; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def title_page(edition: Edition, abstract: str) -> str:
    return f"""<section class="title-page">
<h1>{_e(edition.title)}</h1>
<p class="subtitle">{_e(abstract)}</p>
<p class="authors">{_e(edition.authors)}</p>
<p class="edition">Version {_e(edition.version)} · printed edition, {_e(edition.date)} · {_e(edition.paper)}</p>
<div class="licence">
<p>This edition is printed from the book's web pages. Online, its figures
with sliders are interactive, and the lab runs the model in the browser;
here each such figure shows one setting, and its caption names what the
sliders vary.</p>
<p>Text and figures: Creative Commons Attribution 4.0 International (CC BY 4.0),
https://creativecommons.org/licenses/by/4.0/. Code: MIT licence.
Quoted Linux kernel source keeps its own licence (GPL-2.0), and quotations
from mailing-list posts remain their authors'; "Licences" in
"How to use this book" lists them.</p>
<p>Cite as: {_e(edition.authors)}, <i>{_e(edition.title)}</i>, version {_e(edition.version)}
("How to cite this book" gives a BibTeX entry).</p>
</div>
</section>"""


#: A contents line links here with its page number; the joined PDF turns the
#: link into one to that page (assemble.py). ".invalid" is never a real host.
PAGE_LINK = "https://printed-edition.invalid/page/"


def contents(entries: list[Entry]) -> str:
    items = []
    for e in entries:
        if e.level == 0:
            items.append(f'<li class="level-0">{_e(e.title)}</li>')
        else:
            items.append(f'<li class="level-{e.level}"><a class="entry" href="{PAGE_LINK}{e.page}">'
                         f'<span>{_e(e.title)}</span><span class="leader"></span>'
                         f'<span class="page">{e.page}</span></a></li>')
    return f'<section class="contents"><h2>Contents</h2>\n<ol>\n{chr(10).join(items)}\n</ol></section>'


def front_matter(edition: Edition, abstract: str, entries: list[Entry], page_css: str) -> str:
    """The title page and the contents, as one HTML document for Chromium."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(edition.title)}</title>
<style>{page_css}{_STYLE}</style></head>
<body>
{title_page(edition, abstract)}
{contents(entries)}
</body></html>
"""
