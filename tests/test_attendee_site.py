"""The attendees' copy of the site (vsockmodel.bookkit.attendee_site): no answer keys, no link to them.

A small site in the built book's shapes: the sidebar's entry goes, the
previous/next link goes, a link in the text keeps its words, the search
index forgets the page, and the page itself moves to the instructor's folder.
"""

from __future__ import annotations

import json

from bs4 import BeautifulSoup

from vsockmodel.bookkit import attendee_site

PAGE = """<!DOCTYPE html><html><head><link rel="next" href="answer-keys.html"></head><body>
<nav class="bd-links"><ul><li class="toctree-l1"><a href="misconceptions.html">Misconceptions</a></li>
<li class="toctree-l1"><a href="answer-keys.html">Answer keys</a></li></ul></nav>
<article><p>Check it against the <a class="reference internal" href="answer-keys.html#instructor-ex-ch2">answer
keys</a> after class.</p></article>
<div class="prev-next-area"><a class="left-prev" href="agendas.html">Agendas</a>
<a class="right-next" href="answer-keys.html">Answer keys</a></div></body></html>"""


def test_links_to_the_answer_keys_go_and_their_words_stay():
    out = BeautifulSoup(attendee_site.strip_links(PAGE), "html.parser")
    assert not [t for t in out.find_all(href=True) if "answer-keys" in t["href"]]
    assert [a.get_text() for a in out.select("nav a")] == ["Misconceptions"]
    assert [a.get_text() for a in out.select(".prev-next-area a")] == ["Agendas"]
    assert "Check it against the answer\nkeys after class." in out.article.get_text()


def test_a_page_without_such_links_is_left_as_it_was():
    page = "<html><body><a href='lab.html'>lab</a>   <br/></body></html>"
    assert attendee_site.strip_links(page) is page


def test_the_search_index_forgets_the_answer_keys():
    index = {"docnames": ["book/instructor/agendas", "book/instructor/answer-keys", "chapters/01-skbuff"],
             "filenames": ["a.md", "answer-keys.ipynb", "c.ipynb"], "titles": ["Agendas", "Answer keys", "Ch 1"],
             "terms": {"seed": [0, 1], "kei": 1, "buffer": [1, 2]}, "titleterms": {"answer": 1, "agenda": 0},
             "alltitles": {"Answer keys": [[1, None]], "Agendas": [[0, None], [1, "x"]]}}
    text = "Search.setIndex(" + json.dumps(index) + ")"
    out = json.loads(attendee_site.strip_search_index(text)[len("Search.setIndex("):-1])
    assert out["terms"] == {"seed": [0], "buffer": [2]}
    assert out["titleterms"] == {"agenda": 0}
    assert out["alltitles"] == {"Agendas": [[0, None]]}
    assert "answer-keys" not in json.dumps(out)


def test_split_moves_the_page_and_its_notebook_to_the_instructors_folder(tmp_path):
    site, private = tmp_path / "site", tmp_path / "private"
    (site / "book" / "instructor").mkdir(parents=True)
    (site / "_sources" / "book" / "instructor").mkdir(parents=True)
    (site / "book" / "instructor" / "answer-keys.html").write_text("keys")
    (site / "_sources" / "book" / "instructor" / "answer-keys.ipynb").write_text("{}")
    (site / "book" / "instructor" / "index.html").write_text(PAGE)
    moved = attendee_site.split(site, private)
    assert sorted(p.relative_to(private).as_posix() for p in moved) == [
        "_sources/book/instructor/answer-keys.ipynb", "book/instructor/answer-keys.html"]
    assert not (site / "book" / "instructor" / "answer-keys.html").exists()
    assert "answer-keys" not in (site / "book" / "instructor" / "index.html").read_text()
