"""The chapters' slides (vsockmodel.bookkit.slides), made from the built pages.

- Every chapter has a deck of 8-15 slides: its title and learning goals, its
  sections' claims with their figures, its predict-then-run prompts, a summary
  and its problems in the lab; each slide's text is the page's own.
- Every image a deck shows is one the book built, and its links into the lab
  carry parameters of the model's schema.
- In Chromium with the network closed: every image loads, the keyboard moves
  through the deck, no console error and no request outside.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from bs4 import BeautifulSoup

from book_support import HTML, ensure_book_built, serve
from browser_support import chromium, offline_page
from vsockmodel.bookkit import slides
from vsockmodel.model.schema import BY_NAME

CHAPTERS = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "chapters").glob("[0-9][0-9]-*.ipynb"))
LAB_KEYS = set(BY_NAME) | {"mode", "qchapter", "qseed", "a", "b", "matched", "pairs"}   # lab.js readHash()


@pytest.fixture(scope="module")
def site() -> Path:
    return ensure_book_built()


def _deck(site, chapter):
    return BeautifulSoup((site / "slides" / f"{chapter}.html").read_text(encoding="utf-8"), "html.parser")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_has_a_deck_of_8_to_15_slides_in_the_pages_order(site, chapter):
    deck = _deck(site, chapter)
    kinds = [s["data-kind"] for s in deck.select(".slides > section")]
    assert slides.MIN_SLIDES <= len(kinds) <= slides.MAX_SLIDES, kinds
    assert kinds[0] == "title" and kinds[-2:] == ["summary", "problems"], kinds
    assert "predict" in kinds and ("claim" in kinds or "figure" in kinds), kinds
    assert deck.select("img.deck-figure"), "a deck without a figure"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_decks_text_and_images_are_its_pages_own(site, chapter):
    page = BeautifulSoup((site / "chapters" / f"{chapter}.html").read_text(encoding="utf-8"), "html.parser")
    page_text = " ".join(page.get_text(" ").split())
    page_images = {img["src"] for img in page.find_all("img")}
    deck = _deck(site, chapter)
    for claim in deck.select(".deck-claim"):
        text = " ".join(claim.get_text(" ").split())
        assert text and text in page_text, text
    for prompt in deck.select("section.slide-predict"):
        body = " ".join(prompt.find("p", class_=lambda c: c != "deck-kicker").get_text(" ").split())
        assert body in page_text, body
    for img in deck.select("img.deck-figure"):
        assert img["src"] in page_images, img["src"][:80]
        assert img.get("alt", "").strip(), "a figure without alt text"
        if not img["src"].startswith("data:"):
            assert (site / "slides" / img["src"]).resolve().is_file(), img["src"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_lab_links_in_a_deck_carry_the_models_parameters(site, chapter):
    links = [a["href"] for a in _deck(site, chapter).select('a[href*="lab.html"]')]
    assert links, "no link into the lab"
    for href in links:
        parts = urlsplit(href)
        assert (site / "slides" / parts.path).resolve() == (site / "book" / "lab.html").resolve()
        keys = {k for k, _ in parse_qsl(parts.fragment)}
        assert keys <= LAB_KEYS, keys - LAB_KEYS


def test_the_slides_folder_holds_the_chapters_decks_and_nothing_else(site):
    """A chapter's old address (a page that leads on) gets no deck, and the
    deck of a chapter that moved does not stay behind."""
    assert sorted(p.name for p in (site / "slides").glob("*.html")) == sorted(
        [f"{c}.html" for c in CHAPTERS] + ["index.html"])


def test_the_index_lists_every_deck(site):
    index = BeautifulSoup((site / "slides" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert [a["href"] for a in index.select("li a")] == [f"{c}.html" for c in CHAPTERS]


def test_first_sentence_keeps_inline_markup_and_stops_at_the_first_full_stop():
    p = BeautifulSoup("<p>The <code>recv()</code> call ends at 4.5 KiB. Then more. And more.</p>",
                      "html.parser").p
    assert slides.first_sentence(p) == "The <code>recv()</code> call ends at 4.5 KiB."


@pytest.mark.browser
def test_the_decks_open_offline_load_every_image_and_move_by_keyboard(site):
    with serve(site) as base, chromium() as browser:
        page, watch = offline_page(browser, base, viewport={"width": 1280, "height": 800})
        for chapter in CHAPTERS:
            page.goto(f"{base}slides/{chapter}.html")
            page.wait_for_function("window.Reveal && Reveal.isReady()")
            total = page.evaluate("Reveal.getTotalSlides()")
            page.wait_for_function("[...document.images].every(i => i.complete)")
            broken = page.evaluate("[...document.images].filter(i => !i.naturalWidth).map(i => i.src.slice(0, 80))")
            assert broken == [], (chapter, broken)
            page.keyboard.press("ArrowRight")
            page.wait_for_function("Reveal.getIndices().h === 1")
            page.keyboard.press("End")
            page.wait_for_function(f"Reveal.getIndices().h === {total - 1}")
        assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
        page.context.close()
