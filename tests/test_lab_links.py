"""Every chapter's exercises open the lab's Python on a starting example of that chapter.

The link is a cell's display (vsockmodel.bookkit.lab_links.try_in_lab): the
book shows its ``text/html`` form, a link to the lab page beside the chapters;
JupyterLab shows its widget, a link to the served book in a new tab. The
browser test that one link loads its example's code is in test_lab_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from vsockmodel.bookkit.lab_links import SERVE_COMMAND, lab_link, try_in_lab
from vsockmodel.lab.examples import BY_KEY

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
_CALL = re.compile(r'try_in_lab\("([^"]+)"\)')


def slug(path: Path) -> str:
    """A chapter's slug, as the lab's examples name it: 03-batched-rx -> batched-rx."""
    return path.stem.split("-", 1)[1]


def exercise_links(path: Path) -> list[str]:
    """The example keys the "try it in the lab" cells of a chapter's exercises name."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    start = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                  and re.search(r"^## Exercises$", "".join(c["source"]), re.M)), None)
    if start is None:
        return []
    end = next((i for i, c in enumerate(cells) if i > start and c["cell_type"] == "markdown"
                and re.search(r"^## Summary$", "".join(c["source"]), re.M)), len(cells))
    return [key for c in cells[start:end] if c["cell_type"] == "code"
            for key in _CALL.findall("".join(c["source"]))]


def test_every_chapter_has_exercises():
    assert CHAPTERS and all(
        re.search(r'"## Exercises\\n"', p.read_text(encoding="utf-8")) for p in CHAPTERS)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_s_exercises_link_to_its_own_examples_in_the_lab(path):
    keys = exercise_links(path)
    assert keys, f"{path.name}: no 'try it in the lab' link in its exercises"
    for key in keys:
        assert key in BY_KEY, f"{path.name}: no example {key!r}"
        assert BY_KEY[key].chapter == slug(path), f"{path.name} links to another chapter's example {key!r}"


def test_the_book_s_link_opens_the_lab_page_beside_the_chapters_in_python_mode():
    link = try_in_lab("batched-rx/the-batch-limit")
    html = link._repr_mimebundle_()["text/html"]
    href = re.search(r'<a href="([^"]+)"', html).group(1).replace("&amp;", "&")
    parts = urlsplit(href)
    assert parts.path == "../book/lab.html"
    assert parse_qs(parts.fragment) == {"mode": ["python"], "example": ["batched-rx/the-batch-limit"]}
    assert 'class="vsock-lab-link vsock-try-lab"' in html and "The batch limit" in html
    assert "target=" not in html                     # a page of the same book: same tab


def test_jupyter_s_link_opens_the_served_book_in_a_new_tab_and_says_how_to_serve_it():
    link = try_in_lab("measuring/seed-to-seed")
    bundle = link._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"]     # what JupyterLab shows
    served = link.html(served=True)
    assert 'href="http://localhost:8000/book/lab.html#mode=python&amp;example=measuring%2Fseed-to-seed"' in served
    assert 'target="_blank" rel="noopener"' in served and SERVE_COMMAND in served


def test_an_unknown_example_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^example: no such example 'batched-rx/nope'; one of .*batched-rx/the-batch-limit"):
        try_in_lab("batched-rx/nope")
    with pytest.raises(ValueError, match="^text: "):
        lab_link({"mode": "compare"}, " ")
