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
    crops_of = {_drawing(site, src) for src in page_images if src.startswith("data:image/svg") or src.endswith(".svg")}
    for img in deck.select("img.deck-figure"):
        if "deck-figure-full" in img.get("class", []) and img["src"] not in page_images:
            assert _drawing(site, img["src"]) in crops_of, "a crop of no figure of the page"
        else:
            assert img["src"] in page_images, img["src"][:80]
        assert img.get("alt", "").strip(), "a figure without alt text"
        if not img["src"].startswith("data:"):
            assert (site / "slides" / img["src"]).resolve().is_file(), img["src"]


def _drawing(site, src):
    """An SVG figure without its root element: a crop (slide_figures) draws the same."""
    from vsockmodel.bookkit import slide_figures

    fig = slide_figures.load(src, site / "slides")
    return fig.svg[slide_figures._ROOT.search(fig.svg).end():] if fig else src


def test_a_figure_too_small_for_a_slide_is_split_between_its_panels_where_no_text_is():
    """Six panels in three rows of two, 7-unit text: too small at 1280x720 whole, fine a row at a time."""
    from vsockmodel.bookkit import slide_figures

    panels = "".join(f'<clipPath id="p{r}{c}"><rect x="{40 + 240 * c}" y="{30 + 200 * r}" width="190" height="160"/>'
                     f'</clipPath>' for r in range(3) for c in range(2))
    labels = "".join(f'<text style="font-size: 7px; text-anchor: middle" x="{135 + 240 * c}" y="{205 + 200 * r}">'
                     f'payload</text>' for r in range(3) for c in range(2))
    labels += "".join(f'<text style="font-size: 7px" transform="translate({60 + 240 * c} {222 + 200 * r})">a title</text>'
                      for r in range(2) for c in range(2))      # the next row's titles, placed as matplotlib does
    svg = f'<svg width="480pt" height="640pt" viewBox="0 0 480 640" xmlns="http://www.w3.org/2000/svg"><defs>{panels}</defs>{labels}</svg>'
    fig = slide_figures.parse(svg)
    assert fig.text_px(slide_figures.FULL_BOX) < 14
    crops = slide_figures.plan(fig)
    assert len(crops) == 3 and all(c[0] == 0 and c[2] == 480 for c in crops)
    assert all(fig.text_px(slide_figures.FULL_BOX, c) >= 14 for c in crops)
    for r, ((_, y, _, h), (_, y2, _, _)) in enumerate(zip(crops, crops[1:])):
        assert y + h == pytest.approx(y2)
        assert 205 + 200 * r + 0.3 * 7 < y2 < 222 + 200 * r - 7  # below a row's labels, above the next row's titles
    assert 'viewBox="0.00 0.00 480.00' in __import__("urllib.parse").parse.unquote(slide_figures.cropped(fig, crops[0])).replace("'", '"')
    small = slide_figures.parse(svg.replace("font-size: 7px", "font-size: 30px"))
    assert slide_figures.plan(small) == []                      # large enough where it is


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


# ---- speaker notes ------------------------------------------------------------------------------

def _sections(site, chapter):
    return _deck(site, chapter).select(".slides > section")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_slide_has_notes_that_go_beyond_what_it_shows(site, chapter):
    for s in _sections(site, chapter):
        notes = s.find("aside", class_="notes")
        assert notes is not None and len(notes.get_text().split()) >= 8, (s["data-kind"], s.h1 or s.h2)
        claim = s.find(class_="deck-claim")
        if claim is not None:                       # the notes go on where the slide stops
            assert " ".join(claim.get_text(" ").split()) not in " ".join(notes.get_text(" ").split())


def test_the_notes_timing_is_the_agendas():
    from vsockmodel.bookkit import presets, slide_notes

    rows = [r for r in presets.agenda_rows() if "who-holds-the-lock" in r["activity"]]
    assert {r["agenda"] for r in rows} == {"90 minutes", "3 hours"}
    note = slide_notes.timing_note("02-per-packet-locking", "who-holds-the-lock")
    for r in rows:
        start, end = (int(x) for x in re.findall(r"\d+", r["minutes"]))
        assert f"{r['agenda']}: {r['minutes']} ({end - start} min)" in note
    assert slide_notes.timing_note("02-per-packet-locking", "no-such-section").startswith(
        "Timing: not in the agendas' plan")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_prompts_notes_say_when_and_what_to_expect(site, chapter):
    for s in _deck(site, chapter).select("section.slide-predict"):
        notes = " ".join(s.find("aside", class_="notes").get_text(" ").split())
        assert notes.startswith("Timing: ") and "write down a number first" in notes, notes[:200]


def test_the_prompts_expected_answers_are_the_pages_computed_numbers(site):
    """A prompt's expected answer is the page's paragraph after it, with the numbers its cells computed."""
    with_numbers = 0
    for chapter in CHAPTERS:
        page = " ".join(BeautifulSoup((site / "chapters" / f"{chapter}.html").read_text(encoding="utf-8"),
                                      "html.parser").get_text(" ").split())
        for s in _deck(site, chapter).select("section.slide-predict"):
            notes = " ".join(s.find("aside", class_="notes").get_text(" ").split())
            if "Expected, as the page finds it from the model: " in notes:
                expected = notes.split("Expected, as the page finds it from the model: ", 1)[1].rstrip(" …")
                assert expected[:120] in page, expected[:120]
                with_numbers += bool(re.search(r"\d", expected))
    assert with_numbers >= len(CHAPTERS)


def test_the_trust_slides_set_the_model_against_the_measurement(site):
    from vsockmodel.bookkit import slide_notes

    report = slide_notes._report()["throughput"]
    for chapter in CHAPTERS:
        number = int(chapter[:2])
        trust = _deck(site, chapter).select_one("section.slide-trust aside.notes")
        if trust is None or number not in slide_notes.CHAPTER_TABLES:
            continue
        text = trust.get_text(" ")
        for table in slide_notes.CHAPTER_TABLES[number]:
            first = report[table]["rows"][0]
            assert f"{table}: at 64 B the series measured {first['measured_pct']:+.1f} %" in text, table
            assert f"the model gives {first['predicted_pct']:+.1f} %" in text


def test_the_problems_notes_name_the_kinds_and_the_models_answer_for_seed_1(site):
    from vsockmodel.study import quiz

    for chapter in CHAPTERS:
        number = int(chapter[:2])
        notes = _deck(site, chapter).select_one("section.slide-problems aside.notes").get_text(" ")
        p = quiz.problem(number, 1)
        assert p.kind in notes and p.answer_text in notes


# ---- 1280x720: no text under 14 px -----------------------------------------------------------------

# The smallest text of each visible slide, in slide pixels: the page's own text
# (font size times reveal.js's scale), and each figure's text (an SVG's smallest
# font size times the scale at which the figure is drawn in its box).
SMALLEST_TEXT_JS = """async () => {
  const scale = Reveal.getScale();
  const out = [];
  for (const el of document.querySelectorAll('.reveal .slides section.present *')) {
    if (!el.offsetParent || el.closest('aside.notes')) continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (own) out.push([parseFloat(getComputedStyle(el).fontSize) * scale, el.textContent.trim().slice(0, 40)]);
  }
  for (const img of document.querySelectorAll('.reveal .slides section.present img.deck-figure')) {
    const text = img.src.startsWith('data:image/svg+xml') ? decodeURIComponent(img.src.slice(img.src.indexOf(',') + 1))
      : /[.]svg$/.test(img.src) ? await (await fetch(img.src)).text() : null;
    if (text === null) { out.push([0, 'a figure that is not SVG: its text cannot be measured: ' + img.src.slice(0, 60)]); continue; }
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml');
    const vb = svg.documentElement.getAttribute('viewBox').split(/[ ,]+/).map(Number);
    const sizes = [...svg.querySelectorAll('text')].map(t => {
      const m = /font-size:\\s*([\\d.]+)/.exec(t.getAttribute('style') || '') || /(\\d+(?:\\.\\d+)?)px/.exec(t.getAttribute('style') || '');
      return m ? parseFloat(m[1]) : (parseFloat(t.getAttribute('font-size')) || 10);
    });
    if (!sizes.length) continue;
    // the box the figure gets on the slide (object-fit: contain), in slide pixels
    const k = Math.min(img.offsetWidth / vb[2], img.offsetHeight / vb[3]);
    out.push([Math.min(...sizes) * k, 'figure: ' + (img.alt || '').slice(0, 60)]);
  }
  return out;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_text_on_a_slide_is_smaller_than_14_px_at_1280x720(site, chapter):
    small = []
    with serve(site) as base, chromium() as browser:
        page, watch = offline_page(browser, base, viewport={"width": 1280, "height": 720})
        page.goto(f"{base}slides/{chapter}.html")
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        assert page.evaluate("[Reveal.getConfig().width, Reveal.getConfig().height]") == [1280, 720]
        for i in range(page.evaluate("Reveal.getTotalSlides()")):
            page.evaluate(f"Reveal.slide({i})")
            page.wait_for_function(f"Reveal.getIndices().h === {i}")
            small += [(i, round(px, 1), text) for px, text in page.evaluate(SMALLEST_TEXT_JS) if px < 14 - 0.05]
        page.context.close()
    assert small == [], small
