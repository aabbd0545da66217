"""Every {term} role (or a notebook's link to a term) names a glossary entry,
and every entry is used somewhere.

The glossary (book/glossary.md) is a Sphinx ``{glossary}`` block: each entry is
one or more term lines (synonyms) followed by an indented definition. A role
``{term}`x``` or ``{term}`text <x>``` refers to the term x (case-insensitive,
as Sphinx matches it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "book" / "glossary.md"
_ROLE = re.compile(r"\{term\}`([^`]*)`")


def entries() -> list[list[str]]:
    """The glossary's entries, each as its list of terms (synonyms first to last)."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = text[text.index("```{glossary}") + len("```{glossary}"):]
    body = body[:body.index("\n```")]
    out, current, in_terms = [], [], False
    for line in body.splitlines():
        if not line.strip() or re.match(r":[a-z-]+:", line.strip()):   # blank, or an option (:sorted:)
            in_terms = False
            continue
        if not line.startswith(" ") and not line.startswith("\t"):
            if not in_terms:
                current = []
                out.append(current)
                in_terms = True
            current.append(line.strip())
        else:
            in_terms = False
    return out


def pages() -> dict[str, str]:
    """Every page's text: markdown files, and the markdown cells of notebooks (the
    instructor part's too: the answer keys hold the exercise solutions)."""
    out = {}
    for path in [*ROOT.glob("book/*.md"), *ROOT.glob("book/*.ipynb"), *ROOT.glob("book/instructor/*.md"),
                 *ROOT.glob("book/instructor/*.ipynb"), *ROOT.glob("chapters/*.ipynb")]:
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        else:
            text = path.read_text(encoding="utf-8")
        out[str(path.relative_to(ROOT))] = text
    return out


#: A notebook's link to a term (vsockmodel/bookkit/notebook_links.py): [text](…/glossary.md#term-ID).
_LINK = re.compile(r"\]\((?:[./]*)(?:book/)?glossary\.md#(term-[^)\s]+)\)")


def references() -> dict[str, set[str]]:
    """term (lower case) -> the pages whose roles, or links to its entry, name it."""
    from sphinx.util.nodes import _make_id

    by_id = {_make_id(f"term-{t}"): t.lower() for e in entries() for t in e}
    refs: dict[str, set[str]] = {}
    for page, text in pages().items():
        for role in _ROLE.findall(text):
            m = re.match(r"(.*)<([^>]+)>\s*$", role, re.S)
            term = (m.group(2) if m else role).strip().lower()
            refs.setdefault(term, set()).add(page)
        for term_id in _LINK.findall(text):
            refs.setdefault(by_id.get(term_id, term_id), set()).add(page)
    return refs


def test_the_glossary_has_entries():
    assert len(entries()) > 30


def test_every_term_role_names_an_entry():
    known = {t.lower() for e in entries() for t in e}
    unknown = {term: sorted(pages) for term, pages in references().items() if term not in known}
    assert not unknown, f"{{term}} roles with no glossary entry: {unknown}"


def test_every_entry_is_linked_from_a_page():
    refs = references()
    unused = [e[0] for e in entries() if not any(t.lower() in refs for t in e)]
    assert not unused, f"glossary entries no page links to: {unused}"


def test_the_glossary_says_how_the_intervals_were_computed_once_and_rightly():
    """The cover letters do not say how their intervals were computed; the
    book's own are Student's t intervals of paired log ratios. The entry says
    both, and does not claim the postings' method."""
    text = GLOSSARY.read_text(encoding="utf-8")
    entry = text[text.index("\n95 % CI of a ratio\n"):]
    entry = entry[:entry.index("\n\n", 1)]
    flat = " ".join(entry.split())
    assert "do not say how they computed them" in flat
    assert "log ratios" in flat and "Student" in flat
    assert "Computed on the log of the ratio" not in flat
