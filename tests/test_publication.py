"""The book as a publication: its version, licences, citation and printed edition.

* one version, pyproject.toml's, in the package, ``--version``, CITATION.cff,
  every built page's footer, the slides, the PDF and the bundle's name;
* the licence files, the SPDX id in pyproject.toml, a licence line in every
  page's footer and on every page of the PDF;
* CITATION.cff valid against the Citation File Format 1.2 schema (shipped in
  tests/data), and the how-to-use page's BibTeX entry agreeing with it;
* the PDF: every page of ``_toc.yml`` in order (titles read from the built
  pages, never written here), no page wider than the paper, links between
  pages kept inside the PDF, each explorer's caption, the lab as a description;
* the printing itself: a block too wide for the paper fails the edition, a
  wide code block is set smaller instead of cut off.

Tests of the built book skip when ``_build/html`` is missing, except under
scripts/run-tests (BOOK_REQUIRE_BROWSER=1), where they build it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import jsonschema
import pytest
import yaml
from bs4 import BeautifulSoup
from packaging.licenses import canonicalize_license_expression
from pybtex.database import parse_string

from book_support import BUILD, HTML, REPO, ensure_book_built, toc_docnames
from browser_support import require_browser
from vsockmodel import __version__, _version
from vsockmodel.bookkit import citation

SCHEMA = REPO / "tests" / "data" / "cff-1.2.0-schema.json"
A4_WIDTH_PT = 595.28
#: sha256 of the CC BY 4.0 legal code as SPDX publishes it (npm spdx-license-list 6.12.0,
#: licenses/CC-BY-4.0.json, licenseText, with a final newline).
CC_BY_4_SHA256 = "d557539df68e771cc1eedcc91d13f70fca930e508d11eedcafa4b15db49e3744"


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _cff() -> dict:
    return yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))


def _plain(text: str) -> str:
    """PDF or HTML text as comparable words: ligatures undone, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


# ------------------------------------------------------------------ version


def test_the_version_is_pyprojects_in_the_package_the_cli_and_the_citation():
    version = _pyproject()["project"]["version"]
    assert version == "0.3.0"
    assert __version__ == version
    out = subprocess.run([sys.executable, "-m", "vsockmodel", "--version"], capture_output=True, text=True,
                         cwd=REPO / "tests")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"python -m vsockmodel {version}"
    cff = _cff()
    assert str(cff["version"]) == version
    assert str(cff["preferred-citation"]["version"]) == version


def test_a_checkout_reads_its_pyproject_and_an_installed_wheel_its_metadata(tmp_path, monkeypatch):
    monkeypatch.setattr(_version.metadata, "version", lambda name: "7.7.7")
    mine = tmp_path / "pyproject.toml"
    mine.write_text('[project]\nname = "vsockmodel"\nversion = "9.9.9"\n')
    assert _version.read_version(mine) == "9.9.9"          # stale metadata does not win
    other = tmp_path / "other.toml"
    other.write_text('[project]\nname = "something-else"\nversion = "1.0"\n')
    assert _version.read_version(other) == "7.7.7"
    assert _version.read_version(tmp_path / "missing.toml") == "7.7.7"
    broken = tmp_path / "broken.toml"
    broken.write_text('[project]\nname = "vsockmodel"\n')
    with pytest.raises(RuntimeError, match="no version"):
        _version.read_version(broken)


# ----------------------------------------------------------------- licences


def test_the_licence_files_and_the_spdx_id():
    mit = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License") and "Permission is hereby granted, free of charge" in mit
    assert "The vsockmodel authors" in mit
    content = (REPO / "LICENSE-CONTENT").read_bytes()
    assert content.startswith(b"Creative Commons Attribution 4.0 International")
    assert hashlib.sha256(content).hexdigest() == CC_BY_4_SHA256, "LICENSE-CONTENT is not the official text"
    project = _pyproject()["project"]
    assert canonicalize_license_expression(project["license"]) == "MIT"
    assert {"LICENSE", "LICENSE-CONTENT", "NOTICE.md"} <= set(project["license-files"])
    requires = _pyproject()["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in requires), \
        "license = \"MIT\" (PEP 639) needs setuptools 77 or newer"


def test_the_notice_names_the_kernel_excerpts_and_the_quotations():
    notice = (REPO / "NOTICE.md").read_text(encoding="utf-8")
    assert "GPL-2.0" in notice and "CC BY 4.0" in notice
    for path in ("net/vmw_vsock/virtio_transport.c", "net/vmw_vsock/virtio_transport_common.c",
                 "drivers/vhost/vsock.c"):
        assert path in notice
    assert re.search(r"commit [0-9a-f]{12}", notice)
    assert "Mailing-list quotations" in notice


# ----------------------------------------------------------------- citation


def _cff_errors(data: dict) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(data)]


def test_citation_cff_is_valid_citation_file_format_1_2():
    data = _cff()
    assert data["cff-version"] == "1.2.0"
    assert _cff_errors(data) == []


@pytest.mark.parametrize("change", [
    {"authors": []},
    {"date-released": "2026-13-01"},
    {"licence": "MIT"},
    {"license": "CC-BY-9.9"},
])
def test_the_schema_check_finds_a_broken_citation(change):
    assert _cff_errors({**_cff(), **change})


def test_the_bibtex_entry_says_what_citation_cff_says():
    cff = _cff()
    ref = cff["preferred-citation"]
    [(key, entry)] = parse_string(citation.bibtex(cff), "bibtex").entries.items()
    assert key == citation.KEY and entry.type == "book"
    assert entry.fields["title"] == ref["title"]
    assert entry.fields["year"] == str(ref["year"])
    assert entry.fields["version"] == __version__
    assert entry.fields["publisher"] == ref["publisher"]["name"]
    assert [str(p) for p in entry.persons["author"]] == ["{" + a["name"] + "}" for a in ref["authors"]]
    assert "CC BY 4.0" in entry.fields["note"]


def test_a_person_is_family_then_given_and_a_citation_must_be_a_book():
    cff = _cff()
    ref = {**cff["preferred-citation"], "authors": [{"family-names": "Garzarella", "given-names": "Stefano"}]}
    entry = parse_string(citation.bibtex({**cff, "preferred-citation": ref}), "bibtex").entries[citation.KEY]
    assert [str(p) for p in entry.persons["author"]] == ["Garzarella, Stefano"]
    with pytest.raises(ValueError, match="preferred-citation.type"):
        citation.bibtex({**cff, "preferred-citation": {**ref, "type": "software"}})


# --------------------------------------------------------------- built book


@pytest.fixture(scope="module")
def site() -> Path:
    if not (HTML / "index.html").exists() and not require_browser():
        pytest.skip("the book is not built (scripts/build-book)")
    return ensure_book_built()


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _title(page: Path) -> str:
    h1 = _soup(page).select_one("article.bd-article h1")
    for a in h1.select("a.headerlink"):
        a.decompose()
    return _plain(h1.get_text())


@pytest.mark.parametrize("doc", toc_docnames())
def test_every_pages_footer_gives_the_version_and_the_licences(site, doc):
    footer = _soup(site / f"{doc}.html").select_one(".bd-footer-content .book-edition")
    assert footer is not None, f"{doc}: no edition line in the footer"
    text = _plain(footer.get_text())
    assert f"Version {__version__}." in text
    assert "Text and figures: CC BY 4.0" in text and "code: MIT" in text and "GPL-2.0" in text
    assert footer.select_one('a[rel="license"]')["href"] == "https://creativecommons.org/licenses/by/4.0/"
    own = doc == "book/how-to-use"
    assert footer.select_one('a[href="#licences"]' if own else 'a[href$="how-to-use.html#licences"]') is not None


def test_the_how_to_cite_box_shows_the_bibtex_made_from_citation_cff(site):
    page = _soup(site / "book" / "how-to-use.html")
    assert page.find(id="licences") is not None and page.find(id="how-to-cite") is not None
    block = page.select_one(".book-cite .book-bibtex pre") or page.select_one(".book-cite pre")
    assert block is not None, "no BibTeX block in the How to cite box"
    shown = parse_string(block.get_text(), "bibtex")
    made = parse_string(citation.bibtex(_cff()), "bibtex")
    assert shown.to_string("bibtex") == made.to_string("bibtex")
    assert f"version {__version__}" in _plain(page.select_one(".book-cite").get_text())
    # The kernel excerpts' notice is the page's text (included from NOTICE.md).
    assert "base commit 8df0638138d3" in _plain(page.get_text())


def test_the_labs_model_is_this_version_under_mit(site):
    import zipfile

    [wheel] = (site / "_static" / "lab" / "wheels").glob("*/vsockmodel-*.whl")
    assert wheel.name.startswith(f"vsockmodel-{__version__}-")
    with zipfile.ZipFile(wheel) as whl:
        meta = whl.read(f"vsockmodel-{__version__}.dist-info/METADATA").decode()
        assert "License-Expression: MIT" in meta.splitlines()
        assert f"vsockmodel-{__version__}.dist-info/licenses/LICENSE-CONTENT" in whl.namelist()
    data = (site / "_static" / "lab" / "lab-data.js").read_text(encoding="utf-8")
    assert f'"version": "{__version__}"' in data


def test_the_slides_show_the_version(site):
    decks = sorted((site / "slides").glob("*.html"))
    assert decks
    for deck in decks:
        assert f"version {__version__}" in _plain(_soup(deck).select_one(".deck-version").get_text()), deck.name


# ---------------------------------------------------------- printed edition


@pytest.fixture(scope="module")
def pdf(site):
    from pypdf import PdfReader

    path = BUILD / "pdf" / f"vsock-rx-book-{__version__}.pdf"
    if not path.is_file():
        if require_browser():
            pytest.fail(f"{path.relative_to(REPO)} is missing: scripts/build-book prints it")
        pytest.skip("no printed edition (scripts/build-book prints it)")
    return PdfReader(path)


def _outline(reader) -> list[tuple[str, int, int]]:
    """(title, page index, depth) of every bookmark, in order."""
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((_plain(item.title), reader.get_destination_page_number(item), depth))

    walk(reader.outline, 0)
    return out


def _front_pages(reader) -> int:
    return reader.page_labels.index("1")


def test_the_pdf_has_every_page_of_the_toc_in_order(site, pdf):
    titles = [_title(site / f"{doc}.html") for doc in toc_docnames()]
    chapter_titles = [t for t in titles if re.match(r"\d+\. ", t)]
    assert len(chapter_titles) >= 5
    # Bookmarks: one per page of the book, in order, each at a page that shows its title.
    marks = {t: page for t, page, _ in _outline(pdf)}
    starts = []
    for title in titles:
        assert title in marks, f"no bookmark for {title!r}"
        assert title in _plain(pdf.pages[marks[title]].extract_text()), f"{title!r} is not on its page"
        starts.append(marks[title])
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # The text after the front matter names every chapter, in the table of contents' order.
    body = _plain(" ".join(p.extract_text() for p in pdf.pages[_front_pages(pdf):]))
    at = 0
    for title in chapter_titles:
        found = body.find(title, at)
        assert found >= 0, f"{title!r} is missing after the text of the chapter before it"
        at = found + len(title)


def test_the_pdfs_title_page_contents_and_numbering(pdf):
    title_page = _plain(pdf.pages[0].extract_text())
    for words in (citation.load()["title"], f"Version {__version__}", "CC BY 4.0", "GPL-2.0",
                  "https://creativecommons.org/licenses/by/4.0/"):
        assert words in title_page
    assert re.search(r"printed edition, \d{1,2} [A-Z][a-z]+ \d{4}", title_page)
    front = _front_pages(pdf)
    assert pdf.page_labels[:front] == ["i", "ii", "iii", "iv", "v"][:front]
    contents = _plain(" ".join(p.extract_text() for p in pdf.pages[1:front]))
    assert "Contents" in contents
    # The contents list's page numbers are the pages' printed numbers, and its lines link to them.
    for title, index, depth in _outline(pdf):
        if depth == 1 and re.match(r"\d+\. ", title):
            assert re.search(re.escape(title) + r" " + pdf.page_labels[index] + r"\b", contents), title
    targets = [pdf.get_page_number(a.get_object()["/A"]["/D"][0].get_object())
               for page in pdf.pages[1:front] for a in page.get("/Annots") or []]
    starts = [index for title, index, depth in _outline(pdf) if depth == 1 and re.match(r"\d+\. ", title)]
    assert len(targets) > 50 and set(starts) <= set(targets)


def test_no_pdf_page_is_wider_than_the_paper_and_each_carries_the_licence(pdf):
    for i, page in enumerate(pdf.pages):
        assert float(page.mediabox.width) <= A4_WIDTH_PT + 0.5, f"page {i + 1} is wider than A4"
        text = _plain(page.extract_text())
        assert f"version {__version__} · CC BY 4.0" in text, f"page {i + 1} has no licence line"


def test_links_between_pages_stay_inside_the_pdf(pdf):
    inside = outside = 0
    for page in pdf.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            action = action.get_object() if action is not None else {}
            uri = str(action.get("/URI", ""))
            # (The printing server's address; the book's own text links to localhost:8000.)
            assert not re.match(r"(http://127\.0\.0\.1:\d+/|file:|https://printed-edition\.invalid/)", uri), \
                f"a link to {uri}"
            assert "/Dest" not in annot, "a link to a name Chromium gave within one page"
            if action.get("/S") == "/GoTo":
                assert isinstance(action["/D"], list), "a GoTo to a name, not to a page"
                inside += 1
            else:
                outside += 1
    assert inside > 100 and outside > 5


def test_explorers_print_with_a_caption_and_the_lab_as_its_description(site, pdf):
    explorers = sum(len(_soup(site / f"{doc}.html").select(".vsock-explorer--static")) for doc in toc_docnames())
    text = _plain(" ".join(p.extract_text() for p in pdf.pages))
    assert explorers >= 5
    assert text.count("Interactive online: its sliders vary") == explorers
    assert text.count("Printed at") == explorers
    assert "Open these settings in the lab" not in text
    assert "On paper this page is only a description" in text and "localhost:8000/book/lab.html" in text


# ------------------------------------------------------------- the printing


@pytest.fixture(scope="module")
def chromium():
    from vsockmodel.bookkit.printed import chromium

    if not Path(chromium.CHROMIUM).exists():
        if require_browser():
            pytest.fail(f"{chromium.CHROMIUM} is missing")
        pytest.skip(f"{chromium.CHROMIUM} is missing (scripts/run-tests installs Debian's chromium)")
    return chromium


def _print_fixture(tmp_path, chromium, body: str, paper: str = "a4"):
    from vsockmodel.bookkit.printed.edition import PAPERS, page_css, text_width_px

    sheet = PAPERS[paper]
    (tmp_path / "page.html").write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><main>'
        f'<article class="bd-article"><section id="s"><h1>A page</h1>{body}</section></article>'
        f"</main></body></html>", encoding="utf-8")
    with chromium.serve(tmp_path) as base:
        p = chromium.Printer(base, sheet.width_mm, sheet.height_mm, text_width_px(sheet))
        try:
            return p.print_page("page.html", page_css(sheet, "footer", "A page", 1))
        finally:
            p.close()


@pytest.mark.browser
def test_a_block_wider_than_the_paper_is_reported(tmp_path, chromium):
    printed = _print_fixture(tmp_path, chromium, '<div style="width: 2000px">a wide thing</div>')
    assert any("a wide thing" in c for c in printed.clipped), printed.clipped


@pytest.mark.browser
@pytest.mark.parametrize("paper,size_pt", [("a4", (595.3, 841.9)), ("letter", (612, 792))])
def test_a_wide_code_block_is_set_smaller_not_cut_off_on_either_paper(tmp_path, chromium, paper, size_pt):
    from pypdf import PdfReader

    line = "x" * 70 + " end"
    printed = _print_fixture(tmp_path, chromium, f'<pre style="font-size: 16px; overflow: auto">{line}</pre>', paper)
    assert printed.clipped == []
    assert printed.fitted and printed.fitted[0].startswith("pre at "), printed.fitted
    assert printed.headings == [{"id": "s", "level": 1, "text": "A page"}]
    [page] = PdfReader(io.BytesIO(printed.pdf)).pages
    assert float(page.mediabox.width) == pytest.approx(size_pt[0], abs=1)
    assert float(page.mediabox.height) == pytest.approx(size_pt[1], abs=1)


@pytest.mark.browser
def test_a_print_of_a_page_shows_the_figure_its_sliders_show_and_no_controls(site):
    from book_support import serve
    from browser_support import chromium, offline_page

    page_path = next(f"{doc}.html" for doc in toc_docnames()
                     if _soup(site / f"{doc}.html").select(".vsock-explorer--static"))
    with serve(HTML) as base, chromium() as browser:
        page, watch = offline_page(browser, base, viewport={"width": 1280, "height": 900})
        page.goto(base + page_path)
        box = page.locator(".vsock-explorer--static").first
        slider = box.locator('input[type="range"]').first
        slider.focus()
        page.keyboard.press("ArrowRight" if slider.evaluate("s => s.value !== s.max") else "ArrowLeft")
        shown = []
        for s in box.locator('input[type="range"]').all():
            name = box.locator(f'label[for="{s.get_attribute("id")}"]').inner_text()
            shown.append(f"{name} {s.get_attribute('aria-valuetext')}")
        caption = box.locator(".vsock-explorer-print")
        assert caption.locator(".vsock-explorer-print__setting").text_content() == f"Printed at {', '.join(shown)}."
        assert not caption.is_visible()                       # a screen never shows it
        page.emulate_media(media="print")
        assert caption.is_visible()
        assert not box.locator(".vsock-explorer__sliders").is_visible()
        assert not box.locator(".vsock-lab-link").is_visible()
        assert not page.locator(".bd-sidebar-primary").is_visible()
        assert watch.errors == [] and watch.external == []
