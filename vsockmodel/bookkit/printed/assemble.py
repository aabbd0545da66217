"""Joining the printed pages into one PDF (pypdf).

Chromium prints each page on its own, so its links to other pages point at
the local server the pages came from, and its links within a page at names
that every page reuses ("summary", "exercises"). Here each such link becomes
a link to a page of this PDF: the place its id was printed (each page's
named destinations, which ``prepare.js`` makes Chromium write), or the first
page of the page it names. A link to something the PDF does not hold (the
slides, a notebook download) is dropped; its text stays. Links to the rest
of the web are kept, and print their address (print.css). The contents
list's lines link to their pages.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import unquote, urlsplit

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (ArrayObject, DictionaryObject, FloatObject, NameObject, NullObject,
                           TextStringObject)

from .front import PAGE_LINK
from .toc import Doc


@dataclass
class Part:
    """A printed piece of the edition, in the joined PDF."""

    pdf: bytes
    doc: Optional[Doc] = None              # None: the front matter
    headings: list[dict] = field(default_factory=list)
    start: int = 0                         # index of its first page in the joined PDF
    pages: int = 0
    dests: dict[str, tuple[int, Optional[float]]] = field(default_factory=dict)   # id -> (page, top)


def read_part(pdf: bytes, doc: Optional[Doc] = None, headings: Optional[list[dict]] = None) -> Part:
    """A printed piece with its page count and named destinations."""
    reader = PdfReader(io.BytesIO(pdf))
    return Part(pdf, doc, headings or [], pages=len(reader.pages), dests=_read_dests(reader))


def _name(value) -> str:
    """A destination name as Chromium writes it, as the id it came from."""
    return unquote(str(value).lstrip("/"))


def _read_dests(reader: PdfReader) -> dict[str, tuple[int, Optional[float]]]:
    out = {}
    for name, dest in reader.named_destinations.items():
        page = reader.get_destination_page_number(dest)
        if page >= 0:
            out[_name(name)] = (page, dest.top if dest.top is not None else None)
    return out


class Joiner:
    """Joins the parts in order; then ``link``, ``outline`` and ``write``."""

    def __init__(self, parts: list[Part], base_url: str):
        self.parts = parts
        self.base = base_url
        self.writer = PdfWriter()
        self.by_html = {p.doc.html: p for p in parts if p.doc is not None}
        self._owner: list[Part] = []            # the part of each joined page
        for part in parts:
            part.start = len(self.writer.pages)
            for page in PdfReader(io.BytesIO(part.pdf)).pages:
                self.writer.add_page(page)
                self._owner.append(part)

    # ------------------------------------------------------------------ links
    def _goto(self, part: Part, anchor: str) -> DictionaryObject:
        index, top = part.dests.get(anchor, (0, None))
        page = self.writer.pages[part.start + index].indirect_reference
        return DictionaryObject({
            NameObject("/S"): NameObject("/GoTo"),
            NameObject("/D"): ArrayObject([page, NameObject("/XYZ"), NullObject(),
                                           FloatObject(top) if top is not None else NullObject(), NullObject()]),
        })

    def _to_page(self, number: int) -> Optional[DictionaryObject]:
        """A GoTo to the book's page ``number`` as printed (the front matter is not counted)."""
        front = sum(p.pages for p in self.parts if p.doc is None)
        index = front + number - 1
        if not front <= index < len(self.writer.pages):
            return None
        return DictionaryObject({
            NameObject("/S"): NameObject("/GoTo"),
            NameObject("/D"): ArrayObject([self.writer.pages[index].indirect_reference, NameObject("/Fit")]),
        })

    def _target(self, annot: DictionaryObject, owner: Part) -> Optional[DictionaryObject] | bool:
        """The new action of a link: a GoTo, True to keep it as it is, None to drop it."""
        action = annot.get("/A")
        action = action.get_object() if action is not None else DictionaryObject()
        uri = str(action.get("/URI", ""))
        if owner.doc is None:                                 # the contents list's lines
            return self._to_page(int(uri[len(PAGE_LINK):])) if uri.startswith(PAGE_LINK) else True
        if "/Dest" in annot:                                  # within the page Chromium printed
            return self._goto(owner, _name(annot["/Dest"]))
        if action.get("/S") == "/GoTo" and "/D" in action and not isinstance(action["/D"], ArrayObject):
            return self._goto(owner, _name(action["/D"]))
        if action.get("/S") != "/URI" or not uri.startswith(self.base):
            return True                                       # the web: kept
        url = urlsplit(uri[len(self.base):])
        path = url.path or "index.html"
        if path == "index.html":                              # the front door: the first page
            path = next(p.doc.html for p in self.parts if p.doc is not None)
        target = self.by_html.get(path)
        return self._goto(target, unquote(url.fragment)) if target is not None else None

    def link(self) -> None:
        """Every link between the book's pages now goes to a page of this PDF."""
        for index, page in enumerate(self.writer.pages):
            owner = self._owner[index]
            if "/Annots" not in page:
                continue
            kept = ArrayObject()
            for ref in page["/Annots"]:
                annot = ref.get_object()
                if annot.get("/Subtype") != "/Link":
                    kept.append(ref)
                    continue
                action = self._target(annot, owner)
                if action is None:
                    continue
                if action is not True:
                    annot.pop("/Dest", None)
                    annot[NameObject("/A")] = action
                kept.append(ref)
            page[NameObject("/Annots")] = kept

    # ---------------------------------------------------------------- outline
    def outline(self, front_title: str = "Contents") -> None:
        """Bookmarks: the contents page, then each part, its pages and their sections."""
        front = self.parts[0]
        if front.doc is None and front.pages > 1:
            self.writer.add_outline_item(front_title, front.start + 1)
        current_part, part_item = None, None
        for part in self.parts:
            if part.doc is None:
                continue
            parent = None
            if part.doc.part:
                if part.doc.part != current_part:
                    current_part = part.doc.part
                    part_item = self.writer.add_outline_item(current_part, part.start)
                parent = part_item
            item = self.writer.add_outline_item(part.doc.title, part.start, parent=parent)
            for h in part.headings:
                if h["level"] == 2 and h["id"] in part.dests:
                    self.writer.add_outline_item(h["text"], part.start + part.dests[h["id"]][0], parent=item)

    # ------------------------------------------------------------------ write
    def write(self, out, metadata: dict[str, str], front_pages: int) -> None:
        if front_pages:
            self.writer.set_page_label(0, front_pages - 1, style="/r")
        self.writer.set_page_label(front_pages, len(self.writer.pages) - 1, style="/D", start=1)
        self.writer.add_metadata({NameObject(k): TextStringObject(v) for k, v in metadata.items()})
        self.writer.page_mode = "/UseOutlines"
        self.writer.write(out)
