"""The chapters' prose keeps to its budgets, and every glossary term is used.

Counting follows the editorial brief: the words of the markdown cells, a code
span, a role (``{term}`x```) or a link counting as one word; fenced code,
tables, headings and directive options are not prose. A paragraph is a block
of prose lines (not a list, a table or a heading). The chapters carry no
solutions; a solution is the text under an ``#### Exercise`` heading of the
instructor part's answer keys.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
PAGES = [ROOT / "book" / "intro.ipynb", *CHAPTERS]
ANSWER_KEYS = ROOT / "book" / "instructor" / "answer-keys.ipynb"
MAX_CHAPTER_WORDS = 3500
MAX_PARAGRAPH_WORDS = 120
MAX_SOLUTION_WORDS = 150

# A role, a code span or a link is one word, with the punctuation around it.
_TOKEN = re.compile(r"[(\"'“]*(?:\{[a-z:-]+\}`[^`]*`|`[^`]*`|\[(?:\\.|[^\]\\])*\]\([^)]*\))[)\"'”.,;:]*"
                    r"|<[^>]+>|\S+")


def words(text: str) -> int:
    """Words of a piece of prose: roles, code spans and links count as one."""
    return sum(1 for t in _TOKEN.findall(text) if re.search(r"\w", t))


def markdown_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def blocks(md: str) -> list[tuple[str, str]]:
    """(kind, text) of each block: "code", "table", "heading", "list", "option",
    "fence" (a directive's opening or closing line) or "para"."""
    out, para, in_code = [], [], False

    def flush():
        if para:
            out.append(("para", " ".join(para)))
            para.clear()

    for line in md.splitlines():
        s = line.strip()
        if s.startswith("```") or s.startswith("~~~"):
            flush()
            in_code = not in_code if not s.startswith("```{") else in_code
            out.append(("fence", s))
            continue
        if in_code:
            continue
        if not s:
            flush()
        elif s.startswith(":::") or s.startswith("```"):
            flush()
            out.append(("fence", s))
        elif s.startswith(":") and re.match(r":[a-z-]+:", s):
            flush()
            out.append(("option", s))
        elif s.startswith("#") or re.match(r"\(\S+\)=$", s):
            flush()
            out.append(("heading", s))
        elif s.startswith("|"):
            flush()
            out.append(("table", s))
        elif re.match(r"([-*+]|\d+\.)\s", s) or (line.startswith("  ") and out and out[-1][0] == "list"):
            flush()
            out.append(("list", s))
        else:
            para.append(s)
    flush()
    return out


def prose_words(path: Path) -> int:
    return sum(words(text) for md in markdown_cells(path)
               for kind, text in blocks(md) if kind in ("para", "list"))


def solutions(path: Path = ANSWER_KEYS) -> list[str]:
    """The text of every solution of the answer keys: what follows an ``#### Exercise``
    heading, up to the next heading, without the line that links the exercise."""
    out = []
    for md in markdown_cells(path):
        for m in re.finditer(r"^#### Exercise [^\n]*\n(.*?)(?=^#{1,4} |\Z)", md, re.M | re.S):
            out.append(re.sub(r"^The exercise: (\{ref\}`[^`]*`|\[[^\]]*\]\([^)]*\))\.\n", "",
                              m.group(1).strip("\n") + "\n"))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_is_at_most_its_word_budget(path):
    assert prose_words(path) <= MAX_CHAPTER_WORDS


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_no_paragraph_is_over_its_budget(path):
    long = [text[:80] for md in markdown_cells(path) for kind, text in blocks(md)
            if kind == "para" and words(text) > MAX_PARAGRAPH_WORDS]
    assert not long, f"{len(long)} paragraphs over {MAX_PARAGRAPH_WORDS} words, e.g. {long[0]!r}"


def test_no_solution_is_over_its_budget():
    sols = solutions()
    assert sols, "the answer keys have solutions"
    long = [s[:80] for s in sols if words(s) > MAX_SOLUTION_WORDS]
    assert not long, f"{len(long)} solutions over {MAX_SOLUTION_WORDS} words, e.g. {long[0]!r}"


def test_the_counter_counts_roles_code_and_links_as_one_word():
    assert words("The {term}`RX worker` takes `lock_sock()` [here](x.md) now.") == 6
    assert words(r"See [\[v2 series\]](../book/references.md#v2-series), patch 5.") == 4
    assert words(r"(see ({ref}`[v2 series] <v2-series>`), and ([\[v1 cover\]](x.md#v1-cover)).") == 4
    md = "# Title\n\nOne two three.\n\n| a | b |\n\n- item one\n\n```python\ncode here\n```\n"
    assert [k for k, _ in blocks(md)] == ["heading", "para", "table", "list", "fence", "fence"]
