"""The book's BibTeX entry, made from CITATION.cff.

CITATION.cff (Citation File Format 1.2) is the one description of how to
cite the book; its ``preferred-citation`` is the book. The how-to-use page
shows :func:`bibtex` of it, made when the book is built
(``book/_ext/cff_bibtex.py``), so the two cannot disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import yaml
from pybtex.database import BibliographyData, Entry, Person

REPO = Path(__file__).resolve().parents[2]
CITATION = REPO / "CITATION.cff"
#: The entry's key in the BibTeX the book shows.
KEY = "vsockrxbook"
#: SPDX licence ids as a reader writes them.
LICENCE_NAMES = {"CC-BY-4.0": "CC BY 4.0", "MIT": "MIT"}


def load(path: Path = CITATION) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _person(author: Mapping[str, Any]) -> Person:
    """A CFF author: an entity ({name}) stays one unit in braces; a person is "Family, Given"."""
    if "name" in author:
        return Person("{" + author["name"] + "}")
    return Person(last=author["family-names"], first=author.get("given-names", ""))


def bibtex(cff: Mapping[str, Any], key: str = KEY) -> str:
    """The preferred citation (a book) as a BibTeX @book entry."""
    ref = cff.get("preferred-citation") or {}
    if ref.get("type") != "book":
        raise ValueError(f"CITATION.cff: preferred-citation.type is {ref.get('type')!r}; "
                         "this book's entry needs 'book'")
    version = str(ref.get("version", cff.get("version", "")))
    year = ref.get("year") or str(cff["date-released"])[:4]
    fields = {"title": ref["title"], "year": str(year)}
    if "publisher" in ref:
        fields["publisher"] = ref["publisher"]["name"]
    if version:
        fields["version"] = version
    note = [f"Version {version}"] if version else []
    if "license" in ref:
        licence = ref["license"]
        note.append(f"licence {LICENCE_NAMES.get(licence, licence)}")
    if note:
        fields["note"] = "; ".join(note)
    if "url" in ref:
        fields["url"] = ref["url"]
    entry = Entry("book", fields=fields, persons={"author": [_person(a) for a in ref["authors"]]})
    return BibliographyData({key: entry}).to_string("bibtex").strip() + "\n"
