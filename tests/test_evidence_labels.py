"""The causal story carries evidence labels: measured, kernel source, model hypothesis.

The introduction explains the three labels once (its "evidence-labels"
section); it and chapters 2 and 3 label the claims that carry their argument.
A label is one exact piece of markup, so the book's style draws every label of
a kind the same way; anything else spelled like a label is a mistake.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LABELLED = [ROOT / "book" / "intro.ipynb", ROOT / "chapters" / "02-per-packet-locking.ipynb",
            ROOT / "chapters" / "03-batched-rx.ipynb"]
KINDS = {"measured": "measured", "kernel": "kernel source", "hypothesis": "model hypothesis"}
LABEL = {kind: f'<span class="evidence ev-{kind}">{text}<span class="ev-sep">:</span></span>'
         for kind, text in KINDS.items()}
# Anything that looks like a label, well formed or not.
_LOOKS_LIKE = re.compile(r'<span class="evidence[^"]*">.*?</span>(?:</span>)?', re.S)


def markdown(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def labels(text: str) -> list[str]:
    """The kind of every label in ``text``, or the markup itself where it is no label."""
    by_markup = {markup: kind for kind, markup in LABEL.items()}
    return [by_markup.get(m, m) for m in _LOOKS_LIKE.findall(text)]


def test_the_reader_finds_labels_of_every_kind_and_nothing_else():
    text = f"{LABEL['measured']} a. {LABEL['kernel']} b. {LABEL['hypothesis']} c."
    assert labels(text) == ["measured", "kernel", "hypothesis"]
    wrong = '<span class="evidence ev-measured">measured</span> d.'      # no separator
    assert labels(wrong) == [wrong[:-3]]
    assert labels('<span class="evidence ev-guess">guess<span class="ev-sep">:</span></span>')[0] not in KINDS


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: p.stem)
def test_the_story_carries_labels_of_all_three_kinds_and_only_those(path):
    found = labels(markdown(path))
    assert set(found) == set(KINDS), f"labels of {path.name}: {sorted(set(found))}"


@pytest.mark.parametrize("path", LABELLED[1:], ids=lambda p: p.stem)
def test_a_chapter_points_to_where_the_labels_are_explained(path):
    assert "../book/intro.ipynb#evidence-labels" in markdown(path)


def test_the_introduction_explains_each_label_once():
    text = markdown(LABELLED[0])
    section = text[text.index("(evidence-labels)="):]
    section = section[:section.index("\n:::\n") + 4]
    assert [k for k in labels(section)] == ["measured", "kernel", "hypothesis"]
    assert text.count("(evidence-labels)=") == 1


def test_the_book_s_style_draws_each_kind_apart():
    css = (ROOT / "_assets" / "book" / "book.css").read_text(encoding="utf-8")
    for kind in KINDS:
        assert re.search(rf"\.ev-{kind}\s*\{{[^}}]*border-color", css), kind
    # the separator is for pages without the style (a notebook in JupyterLab)
    assert re.search(r"\.evidence \.ev-sep\s*\{\s*display:\s*none", css)
