"""The instructor part of the book (book/instructor/), as an instructor relies on it.

- It is a part of its own in _toc.yml ("For instructors", between the chapters
  and the reference), and every page of it is built.
- Both agendas' tables add up: blocks follow each other from minute 0 to 90
  (or 180) with no gap and no overlap, and each block's parts fill it exactly.
- "Prepare in an hour" adds up to an hour; every chapter has outcomes, each
  with a way to see it (a problem kind, an exercise, a lab configuration), and
  a problem kind said to be asked by some seeds is the kind those seeds ask.
- Every misconception says what is true and links a chapter section or a lab
  configuration; its per cent figures are cited measurements.
- Every lab link has only keys the lab reads (lab.js readHash) and values the
  model's schema accepts; every problem a link names is the problem its seed asks.
- The answer keys' saved tables are the answers of vsockmodel.study.quiz.
- The exercise solutions are kept out of the chapters: no chapter has a Solution
  dropdown, and the answer keys solve every exercise of every chapter (counted by
  the chapter's ``### Exercise`` headings), each linked back to its exercise, with
  every {eval} name computed by a code cell above it.
- Slide links point at decks the build made.
"""

from __future__ import annotations

import ast
import builtins
import html
import json
import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from book_support import REPO, ensure_book_built
from vsockmodel.model import schema
from vsockmodel.model.params import make_params
from vsockmodel.study import quiz

PART = REPO / "book" / "instructor"
PAGES = ["index", "agendas", "preflight", "misconceptions", "answer-keys"]
MARKDOWN = {name: (PART / f"{name}.md").read_text(encoding="utf-8") for name in PAGES if name != "answer-keys"}
NOTEBOOK = PART / "answer-keys.ipynb"
LAB_JS = (REPO / "vsockmodel" / "lab" / "static" / "address.js").read_text(encoding="utf-8")
#: What the lab's readAddress reads besides the schema's parameters.
LAB_STATE_KEYS = {"mode", "qchapter", "qseed", "a", "b", "matched", "metric", "code", "example", "pairs"}
LAB_MODES = set(re.search(r"export const MODES = \[([^\]]*)\]", LAB_JS).group(1).replace('"', "").replace(" ", "").split(","))
SOURCES = ("[v1 cover]", "[v2 series]", "[v1 review]", "[vhost batch]", "[skb review]")
_DASH = r"\s*[–-]\s*"


def _problem(chapter: int, seed: int, _cache={}) -> quiz.Problem:
    if (chapter, seed) not in _cache:
        _cache[chapter, seed] = quiz.problem(chapter, seed)
    return _cache[chapter, seed]


def _section(text: str, heading: str, level: int = 2) -> str:
    """The text under the first heading of this level that contains ``heading``."""
    marks = "#" * level
    m = re.search(rf"^{marks} [^\n]*{re.escape(heading)}[^\n]*\n(.*?)(?=^#{{1,{level}}} |\Z)", text, re.M | re.S)
    assert m, f"no {marks} heading containing {heading!r}"
    return m.group(1)


def _table(text: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table in ``text``, without its header."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    assert len(rows) > 2 and set(rows[1][0]) <= set("-: "), "no table"
    return rows[2:]


def _lab_links(text: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*lab\.html#[^"]*)"', text)]


# ---- the table of contents and the build ------------------------------------------------

def test_the_instructor_pages_are_a_part_of_their_own_between_the_chapters_and_the_reference():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    captions = [p["caption"] for p in toc["parts"]]
    i = captions.index("For instructors")
    assert captions[i - 1] == "Chapters" and captions[i + 1] == "Reference", captions
    files = [c["file"] for c in toc["parts"][i]["chapters"]]
    assert files == [f"book/instructor/{p}" for p in PAGES]
    for part in toc["parts"][:i] + toc["parts"][i + 1:]:
        assert not any("instructor" in c["file"] for c in part["chapters"]), part["caption"]


@pytest.fixture(scope="module")
def site() -> Path:
    return ensure_book_built()


def test_every_instructor_page_is_built_under_its_caption(site):
    for name in PAGES:
        page = site / "book" / "instructor" / f"{name}.html"
        assert page.is_file(), page
    index = BeautifulSoup((site / "book" / "instructor" / "index.html").read_text(encoding="utf-8"),
                          "html.parser")
    captions = [c.get_text(strip=True) for c in index.select("p.caption")]
    assert "For instructors" in captions, captions


# ---- the agendas --------------------------------------------------------------------------

def _minutes(cell: str) -> tuple[int, int]:
    m = re.fullmatch(rf"\*{{0,2}}(\d+){_DASH}(\d+)\*{{0,2}}", cell)
    assert m, f"not a start–end in minutes: {cell!r}"
    return int(m.group(1)), int(m.group(2))


def agenda(heading: str) -> list[dict]:
    """The blocks of an agenda: minutes, title, the block's row and its parts' rows."""
    blocks = []
    for row in _table(_section(MARKDOWN["agendas"], heading)):
        start, end = _minutes(row[0])
        if row[0].startswith("**"):
            blocks.append({"start": start, "end": end, "title": row[1].strip("*"), "row": row, "parts": []})
        else:
            assert blocks, f"a part before any block: {row}"
            blocks[-1]["parts"].append({"start": start, "end": end, "row": row})
    return blocks


def _check_adds_up(blocks: list[dict], total: int) -> None:
    assert blocks[0]["start"] == 0 and blocks[-1]["end"] == total
    for a, b in zip(blocks, blocks[1:]):
        assert a["end"] == b["start"], f"{a['title']} ends at {a['end']}, {b['title']} starts at {b['start']}"
    for block in blocks:
        assert block["start"] < block["end"], block["title"]
        parts = block["parts"]
        if "break" in block["title"].lower():
            assert not parts, "a break has no parts"
            continue
        assert parts, f"{block['title']}: no parts"
        assert parts[0]["start"] == block["start"] and parts[-1]["end"] == block["end"], block["title"]
        for p, q in zip(parts, parts[1:]):
            assert p["start"] < p["end"] == q["start"], f"{block['title']}: {p['row'][0]} then {q['row'][0]}"


@pytest.mark.parametrize("heading, total", [("90-minute", 90), ("3-hour", 180)])
def test_an_agenda_adds_up_to_its_length_with_contiguous_blocks_and_parts(heading, total):
    blocks = agenda(heading)
    _check_adds_up(blocks, total)
    assert sum(b["end"] - b["start"] for b in blocks) == total
    if total == 180:
        assert sum("break" in b["title"].lower() for b in blocks) >= 2


def test_the_check_catches_a_gap_and_an_overlap():
    block = {"start": 0, "end": 10, "title": "x", "row": [], "parts": [
        {"start": 0, "end": 4, "row": ["0–4"]}, {"start": 5, "end": 10, "row": ["5–10"]}]}
    with pytest.raises(AssertionError):
        _check_adds_up([block], 10)
    block["parts"][1]["start"] = 3
    with pytest.raises(AssertionError):
        _check_adds_up([block], 10)
    block["parts"][1]["start"] = 4
    _check_adds_up([block], 10)


@pytest.mark.parametrize("heading", ["90-minute", "3-hour"])
def test_each_chapter_block_shows_its_deck_a_prompt_a_lab_preset_and_problems(heading):
    blocks = [b for b in agenda(heading) if b["title"].startswith("Chapter")]
    assert [int(re.match(r"Chapter (\d)", b["title"]).group(1)) for b in blocks] == list(quiz.CHAPTERS)
    for n, block in enumerate(blocks, start=1):
        text = " ".join(" ".join(r) for r in [block["row"]] + [p["row"] for p in block["parts"]])
        deck = re.search(r'href="\.\./\.\./slides/(\d\d)-[a-z-]+\.html"', " ".join(block["row"]))
        assert deck and int(deck.group(1)) == n, block["title"]
        assert "Predict, then run" in text or n == 1 and "ch1-ex-split" in text, block["title"]
        assert any(not u.startswith("../lab.html#mode=problems") for u in _lab_links(text)), block["title"]
        problems = [u for u in _lab_links(text) if "mode=problems" in u]
        assert problems and all(f"qchapter={n}&" in u for u in problems), block["title"]


@pytest.mark.parametrize("heading", ["90-minute", "3-hour"])
def test_each_agenda_says_what_to_cut_in_order(heading):
    text = _section(MARKDOWN["agendas"], heading)
    cuts = text[text.index("When time runs short"):]
    assert len(re.findall(r"^\d+\. ", cuts, re.M)) >= 4


# ---- the index: an hour to prepare, and learning outcomes --------------------------------

def test_preparing_takes_an_hour():
    text = _section(MARKDOWN["index"], "Prepare in an hour")
    times = [int(t) for t in re.findall(r"^\d+\. .*?\((\d+) min\)", text, re.M)]
    assert len(times) >= 5 and sum(times) == 60, times


def outcomes() -> dict[int, list[list[str]]]:
    text = _section(MARKDOWN["index"], "Learning outcomes")
    return {n: _table(_section(text, f"Chapter {n}", level=3)) for n in quiz.CHAPTERS}


def test_every_chapter_has_outcomes_and_each_says_how_you_see_it():
    for chapter, rows in outcomes().items():
        assert len(rows) >= 3, chapter
        for outcome, evidence in rows:
            assert outcome and evidence
            assert (re.search(r"problem \*[^*]+\*", evidence) or "{ref}`ch" in evidence
                    or ".ipynb#exercises" in evidence or "lab.html#" in evidence), outcome


def test_a_problem_kind_is_the_kind_its_seeds_ask():
    """'problem *kind* (seeds a, b, … z)': those seeds of that chapter ask that kind."""
    checked = 0
    for chapter, rows in outcomes().items():
        kinds = {_problem(chapter, s).kind for s in (1, 2, 3)}
        for _, evidence in rows:
            for kind, seeds in re.findall(r"problem \*([^*]+)\* \(seeds ([^)]*)\)", evidence):
                assert kind in kinds, (chapter, kind, kinds)
                first, second, last = (int(x) for x in re.findall(r"\d+", seeds))
                assert second - first == 3 and (last - first) % 3 == 0 and 28 <= last <= 30, seeds
                assert _problem(chapter, first).kind == kind, (chapter, first, kind)
                checked += 1
    assert checked >= 10


# ---- the misconceptions ----------------------------------------------------------------------

def misconceptions() -> list[tuple[str, str]]:
    text = MARKDOWN["misconceptions"]
    return re.findall(r"^## (\d+\. .*?)\n(.*?)(?=^## |\Z)", text, re.M | re.S)


def test_six_to_ten_misconceptions_each_with_what_is_true_and_what_clears_it():
    found = misconceptions()
    assert 6 <= len(found) <= 10
    assert [int(t.split(".")[0]) for t, _ in found] == list(range(1, len(found) + 1))
    for title, body in found:
        assert "**What is true.**" in body and "**What clears it.**" in body, title
        clears = body[body.index("**What clears it.**"):]
        chapter = re.search(r"\]\(/chapters/\d\d-[a-z-]+\.ipynb#[a-z0-9-]+\)|\{ref\}`ch\d", clears)
        lab = "lab.html#" in clears
        assert chapter or lab, f"{title}: no chapter section and no lab configuration"


def test_a_misconceptions_per_cent_figures_are_cited_measurements():
    for title, body in misconceptions():
        for para in re.split(r"\n\s*\n", body):
            prose = re.sub(r'href="[^"]*"|\]\([^)]*\)', "", para)      # not the links' own %-escapes
            if re.search(r"\d\s*%", prose):
                assert any(s in para for s in SOURCES), f"{title}: a figure with no source: {para[:80]!r}"


# ---- lab links -------------------------------------------------------------------------------

def _decode(name: str, value: str):
    """A hash value as lab.js decodeValue reads it, for make_params."""
    p = schema.BY_NAME[name]
    if p.kind == "bool":
        assert value in ("true", "false"), f"{name}={value!r}"
        return value == "true"
    if p.kind == "tristate":
        assert value in ("true", "false", ""), f"{name}={value!r}"
        return {"true": True, "false": False, "": None}[value]
    if value == "" and p.optional:
        return None
    return value


def check_lab_link(url: str) -> None:
    """Raises (AssertionError or ValueError) unless the lab reads every key and the model accepts every value."""
    parts = urlsplit(url)
    assert parts.path.endswith("lab.html"), url
    pairs = parse_qsl(parts.fragment, keep_blank_values=True)
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key twice: {url}"
    state = dict(pairs)
    unknown = set(state) - (set(schema.BY_NAME) - {"trace"}) - LAB_STATE_KEYS   # the lab has no trace control
    assert not unknown, f"keys the lab does not read: {unknown}"
    params = {k: _decode(k, v) for k, v in state.items() if k in schema.BY_NAME}
    make_params(**params)
    mode = state.get("mode", "run")
    assert mode in LAB_MODES, mode
    for side in ("a", "b"):
        if side in state:
            config = json.loads(state[side])
            assert isinstance(config, dict) and set(config) <= set(schema.BY_NAME) - {"trace"}, config
            make_params(**config)
    if mode == "compare":
        assert "a" in state and "b" in state, f"a comparison without both sides: {url}"
    if "matched" in state:
        assert state["matched"] in ("0", "1")
    if "pairs" in state:                              # compare's "pairs (seeds)"
        from vsockmodel.lab.api import COMPARE_REPLICATIONS
        assert COMPARE_REPLICATIONS[0] <= int(state["pairs"]) <= COMPARE_REPLICATIONS[1], url
    if mode == "problems":
        chapter, seed = quiz.checked_args(state["qchapter"], state["qseed"])
        assert chapter in quiz.CHAPTERS


def test_the_lab_reads_the_keys_the_links_use():
    for key in LAB_STATE_KEYS:
        assert re.search(rf'k === "{key}"', LAB_JS), f"address.js readAddress does not read {key!r}"


def test_the_link_check_refuses_what_the_lab_or_the_model_would_not_take():
    check_lab_link("../lab.html#variant=p1-p3&batch_pkts=4&headroom_check=false")
    for bad in ("../lab.html#variant=p1-p9", "../lab.html#colour=red", "../lab.html#batch_pkts=4",
                "../lab.html#mode=compare&a=%7B%22variant%22%3A%22baseline%22%7D",
                "../lab.html#vhost_used_batch=yes", "../lab.html#mode=problems&qchapter=7&qseed=1",
                "../lab.html#payload=0", "../lab.html#mode=compare&pairs=32&a=%7B%7D&b=%7B%7D"):
        with pytest.raises((AssertionError, ValueError)):
            check_lab_link(bad)


def _instructor_lab_links(site) -> list[tuple[str, str]]:
    out = []
    for name in PAGES:
        text = (site / "book" / "instructor" / f"{name}.html").read_text(encoding="utf-8")
        for a in BeautifulSoup(text, "html.parser").select('a[href*="lab.html#"]'):
            out.append((name, a["href"], a.get_text(" ", strip=True)))
    return out


def test_every_lab_link_of_the_instructor_pages_is_a_configuration_the_lab_and_model_accept(site):
    links = _instructor_lab_links(site)
    assert len(links) > 40
    for name, href, _ in links:
        assert (site / "book" / "instructor" / urlsplit(href).path).resolve() == (site / "book" / "lab.html").resolve()
        try:
            check_lab_link(href)
        except (AssertionError, ValueError) as exc:
            raise AssertionError(f"{name}: {href}: {exc}") from exc


def test_a_problem_link_that_names_a_kind_opens_a_problem_of_that_kind(site):
    checked = 0
    for name, href, text in _instructor_lab_links(site):
        state = dict(parse_qsl(urlsplit(href).fragment))
        if state.get("mode") != "problems" or name == "answer-keys":
            continue
        chapter, seed = int(state["qchapter"]), int(state["qseed"])
        named = [k for k in {_problem(chapter, s).kind for s in (1, 2, 3)} if k in text]
        if named:
            assert named == [_problem(chapter, seed).kind], (name, href, text)
            checked += 1
    assert checked >= 10


# ---- the answer keys ------------------------------------------------------------------------

def saved_keys() -> dict[int, list[list[str]]]:
    """chapter -> the rows of its saved key table (seed, kind, settings, answer, right if, lab)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tables = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            for out in cell.outputs:
                md = out.get("data", {}).get("text/markdown")
                if md and md.startswith("| seed |"):
                    tables.append(_table(md))
    assert len(tables) == len(quiz.CHAPTERS), "one key table per chapter"
    return dict(enumerate(tables, start=1))


def test_each_chapter_has_a_key_for_seeds_1_to_30_cycling_through_its_kinds():
    for chapter, rows in saved_keys().items():
        assert [int(r[0]) for r in rows] == list(range(1, 31)), chapter
        kinds = [r[1] for r in rows]
        assert len(set(kinds)) == 3 and all(kinds[i] == kinds[i % 3] for i in range(30)), chapter
        for row in rows:
            state = dict(parse_qsl(urlsplit(html.unescape(re.search(r'href="([^"]+)"', row[5]).group(1))).fragment))
            assert state == {"mode": "problems", "qchapter": str(chapter), "qseed": row[0]}


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_the_saved_keys_are_the_models_answers(chapter):
    rows = saved_keys()[chapter]
    for seed in (1, 2, 3, 17, 30):
        p = _problem(chapter, seed)
        row = rows[seed - 1]
        assert (row[1], row[3], row[4]) == (p.kind, p.answer_text, p.tolerance_text), (chapter, seed)


def _chapter_notebooks() -> list[Path]:
    return sorted((REPO / "chapters").glob("[0-9][0-9]-*.ipynb"))


def _markdown(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def _chapter_exercises(path: Path) -> list[tuple[str, str, str]]:
    """(label, number, title) of each exercise: a ``(label)=`` line, then ``### Exercise k: title``."""
    return re.findall(r"^\((ch\d-ex-[a-z0-9-]+)\)=\n### Exercise (\d+): ([^\n]+)$", _markdown(path), re.M)


def test_the_answer_keys_give_the_command():
    text = _markdown(NOTEBOOK)
    assert "python -m vsockmodel quiz --chapter 3 --key 1-30" in text
    code = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    assert all({"hide-input", "remove-input"} & set(c.metadata.get("tags", [])) for c in code)


def test_no_chapter_has_a_solution():
    """The solutions are kept out of the student pages: no Solution dropdown, and a line
    under the Exercises heading leads the instructor to this chapter's answer keys."""
    for n, path in enumerate(_chapter_notebooks(), start=1):
        text = _markdown(path)
        assert not re.search(r"\{dropdown\}\s*Solution", text, re.I), path.name
        assert "Solution" not in text.replace("Solutions are in", ""), path.name
        exercises = text[text.index("## Exercises\n"):]
        head = exercises.split("\n### ", 1)[0]
        # a role, or the Markdown link a notebook uses across pages (bookkit.notebook_links)
        assert (f"{{ref}}`answer keys <instructor-ex-ch{n}>`" in head
                or f"[answer keys](../book/instructor/answer-keys.ipynb#instructor-ex-ch{n})" in head), path.name


def test_the_answer_keys_solve_every_exercise_of_every_chapter():
    text = _markdown(NOTEBOOK)
    solutions = text[text.index("## Exercise solutions"):]
    for n, path in enumerate(_chapter_notebooks(), start=1):
        exercises = _chapter_exercises(path)
        assert exercises, f"{path.name} has no ### Exercise headings"
        assert [int(k) for _, k, _ in exercises] == list(range(1, len(exercises) + 1)), path.name
        assert re.search(rf"^\(instructor-ex-ch{n}\)=\n### Chapter {n}: ", solutions, re.M), n
        sub = _section(solutions, f"Chapter {n}: ", level=3)
        assert (f"{{doc}}`/chapters/{path.stem}`" in sub
                or re.search(rf"\]\(\.\./\.\./chapters/{path.stem}\.ipynb\)", sub)), n
        found = re.findall(r"^#### Exercise (\d+): ([^\n]+)\n(.*?)(?=^#{1,4} |\Z)", sub, re.M | re.S)
        assert [(k, t) for k, t, _ in found] == [(k, t) for _, k, t in exercises], n
        for (label, k, _), (_, _, body) in zip(exercises, found):
            assert (re.search(rf"\{{ref\}}`[^`]*<{label}>`", body)
                    or re.search(rf"\]\(\.\./\.\./chapters/{path.stem}\.ipynb#{label}\)", body)), (n, k)
            solution = re.sub(r"^The exercise: [^\n]*\n", "", body.strip())
            assert len(solution.split()) >= 15, (n, k, "no solution text")


def test_every_eval_of_the_answer_keys_is_computed_above_it():
    """myst-nb evaluates {eval} in page order: each name it uses is set by a code cell above."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assigned = set(dir(builtins))
    for cell in nb.cells:
        if cell.cell_type == "code":
            tree = ast.parse(cell.source)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Name,)) and isinstance(node.ctx, ast.Store):
                    assigned.add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    assigned.add(node.name)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    assigned.update((a.asname or a.name).split(".")[0] for a in node.names)
            continue
        for expr in re.findall(r"\{eval\}`([^`]*)`", cell.source):
            names = {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
            missing = names - assigned
            assert not missing, f"{expr!r} uses {sorted(missing)} before a code cell sets it"


# ---- slides -----------------------------------------------------------------------------------

def test_slide_links_point_at_decks_the_build_made(site):
    decks = set()
    for name in PAGES:
        page = site / "book" / "instructor" / f"{name}.html"
        for a in BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select('a[href*="slides/"]'):
            target = (page.parent / unquote(urlsplit(a["href"]).path)).resolve()
            assert target.is_file(), f"{name}: {a['href']}"
            decks.add(target.name)
    chapters = {f"{p.stem}.html" for p in (REPO / "chapters").glob("[0-9][0-9]-*.ipynb")}
    assert chapters | {"index.html"} <= decks, sorted(decks)
