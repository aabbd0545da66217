"""Slides for each chapter, made from the built book's own pages.

``python -m vsockmodel.bookkit.slides _build/html`` reads each chapter's
built page (so the numbers are the ones the build computed and the figures
are the images the book shows) and writes a reveal.js deck per chapter to
``_build/html/slides/``, with an index. Nothing is a second copy of the text:
a deck is a selection of its page.

A chapter's deck, in page order:

- the title and the chapter's learning goals;
- for each section, its heading and its first sentence (the section's claim,
  by the book's rule that every section opens with one) with the section's
  first figure: a cell's image, or an explorer's first setting;
- each "Predict, then run" prompt, with a link that opens the lab at the
  settings of the section's explorer, when it has one;
- the "How far to trust this" box's first sentence, the summary, and the
  chapter's problems in the lab.

A deck keeps to MAX_SLIDES: the least needed slides (later figures of a
section, then claims without a figure) go first. The decks sit one folder
deep, like the chapters, so the pages' relative links work unchanged.
reveal.js comes from npm (scripts/setup copies it to ``_static/vendor/reveal``).
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from bs4 import BeautifulSoup, NavigableString, Tag

from .. import __version__

#: A deck's bounds (a chapter that would give fewer slides is reported).
MIN_SLIDES, MAX_SLIDES = 8, 15
#: Sections that are not part of a chapter's argument.
SKIPPED_SECTIONS = ("exercises", "summary", "references", "further reading")
REVEAL = "../_static/vendor/reveal/"
LAB = "../book/lab.html"

_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(`\"'\u201c]|\s*$)")


@dataclass
class Slide:
    """One slide: its kind (for the deck's priorities), heading and body HTML."""

    kind: str          # title, claim, figure, predict, trust, summary, problems
    heading: str
    body: str
    notes: str = ""
    priority: int = 0  # higher is dropped first when a deck is too long


@dataclass
class Deck:
    chapter: str       # the page's file stem, e.g. 03-batched-rx
    number: int
    title: str
    slides: list[Slide] = field(default_factory=list)


# ------------------------------------------------------------------ reading the page
def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).split())


def _heading_text(section: Tag) -> str:
    """A section's heading without its number and permalink sign."""
    h = section.find(re.compile("^h[1-6]$"))
    h = copy.copy(h)
    for a in h.select("a.headerlink"):
        a.decompose()
    for n in h.select("span.section-number"):
        n.decompose()
    return _text(h)


def _inline_html(nodes) -> str:
    return "".join(str(n) for n in nodes)


def first_sentence(p: Tag) -> str:
    """The HTML of a paragraph's first sentence (inline code, links and numbers kept)."""
    out = []
    for node in p.children:
        if isinstance(node, NavigableString):
            m = _SENTENCE_END.search(str(node))
            if m:
                out.append(html.escape(str(node)[: m.end()], quote=False))
                return _inline_html(out).strip()
            out.append(html.escape(str(node), quote=False))
        else:
            out.append(node)
    return _inline_html(out).strip()


def _own(section: Tag, selector: str) -> list[Tag]:
    """Elements of a section that are not inside one of its subsections."""
    return [t for t in section.select(selector) if t.find_parent("section") is section]


def _figures(section: Tag) -> list[Tag]:
    """A section's figures (its subsections' too): cell images and explorers' first setting."""
    found = []
    for img in section.select("div.cell_output img, noscript img, figure img"):
        if img.find_parent("noscript") is None and img.find_parent(class_="widget-html") is not None:
            continue                      # the explorers' widget copies; their noscript one is used
        found.append(img)
    return found


def _lab_link(section: Tag) -> Optional[str]:
    """The first "open in the lab" link of a section (an explorer's settings)."""
    for a in section.select('a[href*="lab.html"]'):
        if a.find_parent("section") is section:
            return a["href"]
    return None


def _admonitions(root: Tag, title: str) -> list[Tag]:
    out = []
    for ad in root.select("div.admonition"):
        t = ad.select_one(".admonition-title")
        if t is not None and _text(t).lower().startswith(title.lower()):
            out.append(ad)
    return out


def _admonition_body(ad: Tag) -> str:
    ad = copy.copy(ad)
    ad.select_one(".admonition-title").decompose()
    return "".join(str(c) for c in ad.children if isinstance(c, Tag))


def _figure_html(img: Tag) -> str:
    alt = img.get("alt") or ""
    return (f'<img class="deck-figure" src="{html.escape(img["src"], quote=True)}" '
            f'alt="{html.escape(alt, quote=True)}">')


def _lab_button(href: str, text: str = "Open these settings in the lab") -> str:
    return f'<p class="deck-lab"><a href="{html.escape(href, quote=True)}">{html.escape(text)}</a></p>'


def _rebase_links(soup: BeautifulSoup, page: Path) -> None:
    """Make the page's links work from slides/: a deck sits one folder deep
    like the chapter, so ``../`` links stay, but a link to a page beside the
    chapter (``06-measuring.html#x``) or to its own anchors (``#x``) would
    land in the decks' folder."""
    for a in soup.select("a[href]"):
        href = a["href"]
        if re.match(r"[a-z]+:|/|\.\./", href):
            continue
        a["href"] = f"../{page.parent.name}/" + (page.name + href if href.startswith("#") else href)


def read_chapter(page: Path) -> Deck:
    """A chapter's deck from its built page."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    _rebase_links(soup, page)
    article = soup.select_one("article.bd-article") or soup.body
    top = article.find("section")
    number_tag = top.select_one("h1 span.section-number")
    number = int(re.match(r"\d+", number_tag.get_text()).group()) if number_tag else 0
    title = _heading_text(top)
    deck = Deck(chapter=page.stem, number=number, title=title)

    goals = _admonitions(top, "Learning goals")
    deck.slides.append(Slide("title", title, '<p class="deck-kicker">Chapter {}</p>'.format(number)
                             + (_admonition_body(goals[0]) if goals else "")))
    trust = None
    summary = None
    for section in top.find_all("section", recursive=False):
        name = _heading_text(section)
        low = name.lower()
        if low.startswith("summary"):
            summary = section
        if any(low.startswith(s) for s in SKIPPED_SECTIONS):
            continue
        _section_slides(deck, section, name)
        for ad in _admonitions(section, "How far to trust"):
            trust = trust or ad
    for ad in _admonitions(top, "How far to trust"):
        trust = trust or ad
    if trust is not None:
        ps = trust.find_all("p", recursive=False)
        body = next((first_sentence(p) for p in ps if "admonition-title" not in (p.get("class") or [])), "")
        deck.slides.append(Slide("trust", "How far to trust this", f"<p>{body}</p>", priority=1))
    if summary is not None:
        items = summary.find("ul")
        body = str(items) if items else "".join(str(p) for p in summary.find_all("p", recursive=False)[:2])
        deck.slides.append(Slide("summary", "Summary", body))
    deck.slides.append(Slide(
        "problems", "Problems",
        f"<p>A seed picks a problem; the model computes its answer.</p>"
        + _lab_button(f"{LAB}#mode=problems&qchapter={number}&qseed=1",
                      f"Chapter {number}'s problems in the lab")
        + f"<pre><code>python -m vsockmodel quiz --chapter {number} --seed 1</code></pre>"))
    _trim(deck)
    return deck


def _section_slides(deck: Deck, section: Tag, name: str) -> None:
    """A section's slides in page order: its claim (with a figure that comes
    before any prompt), then each prompt and each later figure."""
    paragraphs = [p for p in _own(section, "p") if p.find_parent("div", class_="admonition") is None
                  and p.find_parent("div", class_="cell") is None]
    claim = f'<p class="deck-claim">{first_sentence(paragraphs[0])}</p>' if paragraphs else ""
    notes = _text(paragraphs[0]) if paragraphs else ""
    lab = _lab_link(section)
    order = {id(t): i for i, t in enumerate(section.find_all(True))}
    events = sorted([(order[id(img)], "figure", img) for img in _figures(section)]
                    + [(order[id(ad)], "predict", ad) for ad in _admonitions(section, "Predict")],
                    key=lambda e: e[0])
    if events and events[0][1] == "figure":
        _, _, img = events.pop(0)
        deck.slides.append(Slide("claim", name, claim + _figure_html(img) + (_lab_button(lab) if lab else ""),
                                 notes=notes))
    elif claim:
        deck.slides.append(Slide("claim", name, claim, notes=notes, priority=2))
    after_prompt = False
    for _, kind, tag in events:
        if kind == "predict":
            deck.slides.append(Slide("predict", name, '<p class="deck-kicker">Predict, then run</p>'
                                     + _admonition_body(tag)))
            after_prompt = True
        else:
            # A figure that answers a prompt stays; further figures go first when a deck is long.
            deck.slides.append(Slide("figure", name, _figure_html(tag) + (_lab_button(lab) if lab else ""),
                                     priority=1 if after_prompt else 3))
            after_prompt = False


def _trim(deck: Deck) -> None:
    """Drop the least needed slides (highest priority, latest first) beyond MAX_SLIDES."""
    while len(deck.slides) > MAX_SLIDES:
        worst = max(range(len(deck.slides)), key=lambda i: (deck.slides[i].priority, i))
        if deck.slides[worst].priority == 0:
            break
        del deck.slides[worst]


# ------------------------------------------------------------------ writing the deck
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}: slides</title>
<link rel="stylesheet" href="{reveal}reveal.css">
<link rel="stylesheet" href="{reveal}theme/white.css">
<link rel="stylesheet" href="../_static/book/slides.css">
</head>
<body>
<div class="reveal"><div class="slides">
{slides}
</div></div>
<p class="deck-home"><a href="../chapters/{chapter}.html">The chapter</a> · <a href="index.html">All decks</a>
 · <kbd>→</kbd> next, <kbd>Esc</kbd> overview · <span class="deck-version">version {version}, <a rel="license" href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a></span></p>
<script src="{reveal}reveal.js"></script>
<script src="{reveal}plugin/notes/notes.js"></script>
<script>
// A projector's 16:10 slide; on a phone, a narrow slide whose text stays readable.
const narrow = matchMedia("(max-width: 600px)").matches;
Reveal.initialize({{ hash: true, slideNumber: "c/t", controls: true, progress: true, center: false,
  width: narrow ? 440 : 1280, height: narrow ? 900 : 800, margin: 0.04, scrollActivationWidth: null,
  plugins: [RevealNotes] }});
</script>
</body>
</html>
"""


def _section(slide: Slide, first: bool) -> str:
    tag = "h1" if first else "h2"
    notes = f'<aside class="notes">{html.escape(slide.notes)}</aside>' if slide.notes else ""
    return (f'<section class="slide-{slide.kind}" data-kind="{slide.kind}">'
            f"<{tag}>{html.escape(slide.heading)}</{tag}>{slide.body}{notes}</section>")


def render(deck: Deck) -> str:
    slides = "\n".join(_section(s, i == 0) for i, s in enumerate(deck.slides))
    return _PAGE.format(title=html.escape(deck.title), reveal=REVEAL, slides=slides, chapter=deck.chapter,
                        version=html.escape(__version__))


def render_index(decks: list[Deck]) -> str:
    rows = "\n".join(
        f'<li><a href="{d.chapter}.html">Chapter {d.number}: {html.escape(d.title)}</a> ({len(d.slides)} slides)</li>'
        for d in decks)
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Slides</title><link rel="stylesheet" href="../_static/book/slides.css"></head>
<body class="deck-index"><main>
<h1>Slides, one deck per chapter</h1>
<p>Each deck is made from its chapter's built page: the same figures, claims and prompts.
Arrow keys move; <kbd>Esc</kbd> shows every slide; <kbd>S</kbd> opens the speaker notes.</p>
<ul>
{rows}
</ul>
<p><a href="../index.html">Back to the book</a> · <span class="deck-version">version {html.escape(__version__)}</span></p>
</main></body></html>
"""


def build(site: Path) -> list[Deck]:
    """Write every chapter's deck and the index into ``site/slides``."""
    # A chapter's old address, kept by book/_ext/moved_pages.py, is a page that
    # only sends the reader on: no deck for it.
    pages = sorted(p for p in (site / "chapters").glob("[0-9][0-9]-*.html")
                   if 'name="vsock-moved-to"' not in p.read_text(encoding="utf-8")[:2000])
    if not pages:
        raise SystemExit(f"slides: no chapter pages in {site / 'chapters'}; build the book first")
    out = site / "slides"
    out.mkdir(exist_ok=True)
    decks = [read_chapter(p) for p in pages]
    # The folder is this function's alone: a deck of a chapter that moved goes.
    for stale in set(out.glob("*.html")) - {out / f"{d.chapter}.html" for d in decks} - {out / "index.html"}:
        stale.unlink()
    for deck in decks:
        (out / f"{deck.chapter}.html").write_text(render(deck), encoding="utf-8")
    (out / "index.html").write_text(render_index(decks), encoding="utf-8")
    return decks


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vsockmodel.bookkit.slides", description=__doc__.split("\n")[0])
    ap.add_argument("site", type=Path, help="the built book (_build/html)")
    args = ap.parse_args(argv)
    decks = build(args.site)
    short = [d for d in decks if not MIN_SLIDES <= len(d.slides) <= MAX_SLIDES]
    for d in decks:
        print(f"slides/{d.chapter}.html: {len(d.slides)} slides")
    if short:
        print("slides: outside 8-15 slides: " + ", ".join(f"{d.chapter} ({len(d.slides)})" for d in short),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
