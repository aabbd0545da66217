"""Speaker notes for the chapters' decks: what the instructor needs and the slide does not show.

Every slide gets notes (``<aside class="notes">``, reveal.js's speaker view):

- when the agendas give the slide's section, its block or its problems time:
  "90 minutes: 26–33 (7 min); 3 hours: 42–51 (9 min)" (read from
  ``book/instructor/agendas.md``);
- a prompt's expected answer: the page's own paragraphs after the prompt,
  whose numbers the page's cells computed from the model at build time;
- a claim's or a figure's continuation: the rest of the page's paragraph,
  not the sentence the slide already shows;
- where the model and the series' measurements part (the trust slide), from
  the validation report the book's build computed
  (``vsockmodel.study.validate``), and the problems' kinds with the model's
  answer for seed 1 (``vsockmodel.study.quiz``).

No number here is typed in: each comes from the built page, the model or
the measurements.
"""

from __future__ import annotations

import functools
import re

from bs4 import BeautifulSoup, Tag

from ..model.units import fmt_size
from .presets import agenda_rows

WORDS = 90                 # a note's excerpt of the page: enough to answer from, short enough to glance at
_SECTION_LINK = re.compile(r"\]\(/chapters/(\d\d-[a-z0-9-]+)\.ipynb#([a-z0-9_-]+)\)")
_DECK_LINK = re.compile(r"slides/(\d\d-[a-z0-9-]+)\.html")
#: The series' tables that each chapter's argument rests on (validate.THROUGHPUT's names).
CHAPTER_TABLES = {2: ("v1_p1p3_fixed64k",), 3: ("v1_all_fixed64k", "v1_p1p3_fixed64k"),
                  5: ("v1_p4p5_fixed64k",), 6: ("v1_all_fixed64k", "v1_all_fixedsyscall", "v2_all_fixed64k")}


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).split())


def excerpt(text: str, words: int = WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _span(minutes: str) -> str:
    m = re.match(r"(\d+)\s*[–-]\s*(\d+)", minutes)
    return f"{minutes} ({int(m.group(2)) - int(m.group(1))} min)" if m else minutes


@functools.lru_cache(maxsize=1)
def timing() -> dict:
    """(chapter stem, what) -> ["90 minutes: 26–33 (7 min)", ...]; what is a section's anchor,
    "block" (the chapter's block) or "problems"."""
    found: dict = {}
    chapter_of_block: dict = {}
    for row in agenda_rows():
        where = f"{row['agenda']}: {_span(row['minutes'])}"
        if row["is_block"]:
            deck = _DECK_LINK.search(row["open"])
            chapter_of_block[(row["agenda"], row["block"])] = deck.group(1) if deck else None
            if deck:
                found.setdefault((deck.group(1), "block"), []).append(where)
            continue
        for stem, anchor in _SECTION_LINK.findall(row["activity"]):
            found.setdefault((stem, anchor), []).append(where)
        stem = chapter_of_block.get((row["agenda"], row["block"]))
        if stem and "mode=problems" in row["open"]:
            found.setdefault((stem, "problems"), []).append(where)
    return found


def timing_note(chapter: str, what: str) -> str:
    times = timing().get((chapter, what))
    if times:
        return "Timing: " + "; ".join(times) + "."
    return "Timing: not in the agendas' plan; a minute, or skip it when time is short."


def paragraphs_after(tag: Tag, section: Tag, count: int = 2) -> str:
    """The text of the first ``count`` paragraphs of ``section`` after ``tag``: the page's own
    words, outside boxes and code cells."""
    out = []
    for p in tag.find_all_next("p"):
        if p.find_parent("section") is not section and section not in p.parents:
            break
        if p.find_parent("div", class_="admonition") is not None or p.find_parent("div", class_="cell") is not None:
            continue
        if tag in p.parents:
            continue
        out.append(_text(p))
        if len(out) == count:
            break
    return " ".join(out)


def rest_of_paragraph(p: Tag, shown: str) -> str:
    """A paragraph's text after the sentence the slide shows."""
    text = _text(p)
    plain = _text(BeautifulSoup(shown, "html.parser"))        # spaced as the paragraph's text is
    return text[len(plain):].strip() if text.startswith(plain) else text


@functools.lru_cache(maxsize=1)
def _report() -> dict:
    from ..study import validate

    return validate.score(validate.predict_cached(jobs=2))


def model_against_measurements(number: int) -> str:
    """Where the model and the series part, for the tables a chapter rests on."""
    tables = CHAPTER_TABLES.get(number)
    if not tables:
        return ("Model against measurement: the series measured nothing this chapter's figures show; "
                "its numbers are the model's alone.")
    report = _report()["throughput"]
    lines = []
    for table in tables:
        rows = report[table]["rows"]
        first = rows[0]
        worst = max(rows, key=lambda r: abs(r["predicted_pct"] - r["measured_pct"]))
        lines.append(
            f"{table}: at {fmt_size(first['payload'])} the series measured {first['measured_pct']:+.1f} % "
            f"[{first['ci_low']:+.1f}, {first['ci_high']:+.1f}], the model gives {first['predicted_pct']:+.1f} %; "
            f"the largest gap is at {fmt_size(worst['payload'])}: measured {worst['measured_pct']:+.1f} %, "
            f"model {worst['predicted_pct']:+.1f} % "
            f"({worst['predicted_pct'] - worst['measured_pct']:+.0f} points).")
    return "Model against measurement (chapter 6 has the full report card): " + " ".join(lines)


def problems_note(number: int) -> str:
    """The kinds a room gets, and the model's answer for seed 1 (each attendee has their own seed)."""
    from ..study import quiz

    kinds = [quiz.problem(number, s).kind for s in range(len(quiz.KINDS[number]))]
    example = quiz.problem(number, 1)
    n = len(kinds)
    return (f"Each attendee works their own seed: seeds {', '.join(f'{k} mod {n}' for k in range(n))} ask "
            + ", ".join(f"“{kind}”" for kind in kinds)
            + f". Seed 1: {example.question} The model: {example.answer_text} ({example.tolerance_text}). "
            "A wrong first answer gets a hint and a second try. The room's answers: the instructor's tally "
            "(/instructor/tally on the room's server).")
