"""The workshop bundle (scripts/workshop-bundle), as an instructor would use it.

Built in the suite, unpacked in a temporary folder, served by its own serve.py
under a Python with no site-packages (the standard library only), then opened
in Chromium with the network closed: the lab starts and checks a problem, a
slide deck moves by keyboard, the instructor's agenda opens; no console error
and no request outside.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from book_support import REPO, ensure_book_built
from browser_support import chromium, offline_page
from vsockmodel import __version__
from vsockmodel.study import quiz

READY_MS = 120_000


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """The bundle scripts/workshop-bundle makes (WORKSHOP_BUNDLE=ARCHIVE: one made already)."""
    if os.environ.get("WORKSHOP_BUNDLE"):
        return Path(os.environ["WORKSHOP_BUNDLE"])
    ensure_book_built()
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([str(REPO / "scripts" / "workshop-bundle"), "--out", str(out)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:]
    [made] = out.glob("vsock-workshop-*.tar.gz")
    return made


@pytest.fixture(scope="module")
def bundle(archive, tmp_path_factory):
    assert archive.name == f"vsock-workshop-{__version__}.tar.gz"
    room = tmp_path_factory.mktemp("room")
    with tarfile.open(archive) as tar:
        tar.extractall(room, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    [top] = room.iterdir()
    return top


def test_the_bundle_holds_the_book_its_server_and_a_readme(bundle):
    assert bundle.name == f"vsock-workshop-{__version__}"
    for path in ("README.md", "serve.py", f"vsock-rx-book-{__version__}.pdf", "site/index.html", "site/book/lab.html", "site/slides/index.html",
                 "site/book/instructor/index.html", "site/book/instructor/agendas.html", "room/room.json",
                 "server/roomserver/app.py", "server/segno/__init__.py", "server/segno/LICENSE",
                 "instructor/site/book/instructor/answer-keys.html"):
        assert (bundle / path).is_file(), path
    assert not (bundle / "local" / "wheelhouse").exists()      # the wheelhouse only on request
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert "python3 serve.py --room" in readme and "/instructor/KEY" in readme and "--tally-csv" in readme
    assert "scripts/workshop-dry-run" in readme and "LICENSES/" in readme
    assert f"vsock-rx-book-{__version__}.pdf" in readme
    assert (bundle / f"vsock-rx-book-{__version__}.pdf").read_bytes().startswith(b"%PDF-")
    assert not re.search(r"/work/|/root/|/home/", readme), "a path from the building machine"
    assert len(list((bundle / "site/_static/lab/wheels").iterdir())) == 1   # no stale wheels


@pytest.fixture(scope="module")
def served(bundle):
    # -I -S: no site-packages, no environment: serve.py needs only the standard library.
    proc = subprocess.Popen([sys.executable, "-I", "-S", "serve.py", "--port", "0", "--bind", "127.0.0.1"],
                            cwd=bundle, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        for line in proc.stdout:
            m = re.search(r"on this machine:\s+(http://localhost:\d+/)", line)
            if m:
                base = m.group(1).replace("localhost", "127.0.0.1")
                break
        assert base, "serve.py printed no address"
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.browser
def test_served_from_the_bundle_the_lab_slides_and_agenda_work_offline(served):
    expected = quiz.problem(2, 5)
    with chromium() as browser:
        page, watch = offline_page(browser, served, viewport={"width": 1280, "height": 900})
        page.goto(served + "book/lab.html#mode=problems&qchapter=2&qseed=5")
        page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
        page.wait_for_function("document.getElementById('vsock-lab').dataset.problem", timeout=120_000)
        shown = json.loads(page.evaluate("document.getElementById('vsock-lab').dataset.problem"))
        assert shown["question"] == expected.question
        page.locator("#lab-qanswer").fill(expected.answer_text)
        page.get_by_role("button", name="Check my answer").click()
        page.wait_for_function(
            "document.querySelector('.lab-change[role=status]').dataset.correct === 'true'", timeout=60_000)

        page.goto(served + "slides/03-batched-rx.html")
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("Reveal.getIndices().h === 1")

        page.goto(served)                                    # the room page
        page.get_by_role("button", name="Check the lab").click()
        page.wait_for_function("document.getElementById('room-lab-status').dataset.state === 'ok'",
                               timeout=READY_MS)
        assert page.locator("svg.room-qr").count() > 5

        page.goto(served + "book/instructor/agendas.html")
        assert page.get_by_role("heading", name=re.compile("90-minute")).count() == 1
        assert page.get_by_role("heading", name=re.compile("3-hour")).count() == 1
        assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
        page.context.close()


def test_the_attendees_site_has_no_answer_keys_and_no_link_to_them(bundle):
    site = bundle / "site"
    assert not (site / "book" / "instructor" / "answer-keys.html").exists()
    assert not list(site.glob("_sources/book/instructor/answer-keys*"))
    for page in site.rglob("*.html"):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        links = [a["href"] for a in soup.find_all(["a", "link"], href=True) if "answer-keys" in a["href"]]
        assert links == [], (page.relative_to(site), links)
    assert "answer-keys" not in (site / "searchindex.js").read_text(encoding="utf-8")
    # the sidebar keeps the rest of the instructor part
    index = (site / "book" / "instructor" / "index.html").read_text(encoding="utf-8")
    assert "misconceptions.html" in index and "agendas.html" in index


def test_each_file_that_compresses_has_its_gz_beside_it_with_its_time(bundle):
    import gzip

    wasm = next((bundle / "site" / "_static" / "vendor" / "pyodide").glob("*.wasm"))
    gz = wasm.with_name(wasm.name + ".gz")
    assert gzip.decompress(gz.read_bytes()) == wasm.read_bytes()
    assert int(gz.stat().st_mtime) == int(wasm.stat().st_mtime)
    pages = list((bundle / "site").rglob("*.html"))
    assert all(p.with_name(p.name + ".gz").is_file() for p in pages)


def test_the_bundle_ships_every_licence_with_a_table(bundle):
    from vsockmodel.bookkit import licences

    folder = bundle / "LICENSES"
    table = (folder / "README.md").read_text(encoding="utf-8")
    for c in licences.COMPONENTS:
        text = (folder / licences._file_name(c)).read_text(encoding="utf-8")
        assert len(text) > 200 and f"| {c.name} |" in table, c.name
    assert "Mozilla Public License Version 2.0" in (folder / "Pyodide.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE" in (folder / "Font-Awesome-Free.txt").read_text(encoding="utf-8").upper()
    for own in licences.OWN:
        assert (folder / own).read_text(encoding="utf-8") == (REPO / own).read_text(encoding="utf-8")
    # every vendored library in the site has its licence beside it too
    for lib in (bundle / "site" / "_static" / "vendor").iterdir():
        assert list(lib.glob("LICENSE*")), lib.name


def test_the_command_line_installs_offline_from_local_in_two_lines(bundle, tmp_path):
    wheels = sorted(p.name for p in (bundle / "local").glob("*.whl"))
    assert [w.split("-")[0] for w in wheels] == ["simpy", "vsockmodel"]
    venv = tmp_path / "vsock"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-index", "--find-links",
                          str(bundle / "local"), "vsockmodel"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1"})
    assert pip.returncode == 0, pip.stderr
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "vsockmodel", "starvation", "--buffer", "1K",
                          "--variant", "p1-p3", "--no-headroom-check"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and "Answer: RESET" in out.stdout, out.stdout + out.stderr
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert "--no-index --find-links local vsockmodel" in readme


def test_a_bundle_needs_the_printed_edition_of_its_version(tmp_path):
    from vsockmodel.bookkit.bundle import make_bundle

    site = tmp_path / "html"
    from vsockmodel.bookkit import licences

    for page in ("index.html", "book/lab.html", "slides/index.html") + tuple(
            c.text for c in licences.COMPONENTS if c.text):
        (site / page).parent.mkdir(parents=True, exist_ok=True)
        (site / page).write_text("<!DOCTYPE html>")
    with pytest.raises(SystemExit, match="no printed edition"):
        make_bundle(site, tmp_path / "out", tmp_path / f"vsock-rx-book-{__version__}.pdf")
    old = tmp_path / "vsock-rx-book-0.0.1.pdf"
    old.write_bytes(b"%PDF-1.4")
    with pytest.raises(SystemExit, match="not the printed edition of version"):
        make_bundle(site, tmp_path / "out", old)
    pdf = tmp_path / f"vsock-rx-book-{__version__}.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    with tarfile.open(make_bundle(site, tmp_path / "out", pdf)) as tar:
        assert f"vsock-workshop-{__version__}/{pdf.name}" in tar.getnames()


@pytest.mark.browser
def test_the_dry_run_opens_everything_an_agenda_uses_and_times_each_step(archive):
    """scripts/workshop-dry-run on the bundle: the room page, every preset (each problem answered),
    every deck and every agenda link load without an error, each step timed."""
    proc = subprocess.run([str(REPO / "scripts" / "workshop-dry-run"), str(archive)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:]
    steps = re.findall(r"^  (ok  |FAIL) +([\d.]+) s  (.*)$", out, re.M)
    names = [name for _, _, name in steps]
    assert names[0] == "the room page and its lab check"
    presets = json.loads(subprocess.run(["tar", "-xzOf", str(archive), f"vsock-workshop-{__version__}/room/room.json"],
                                        capture_output=True, check=True).stdout)["presets"]
    assert sum(n.startswith("preset ") for n in names) == len({(p["address"], p["problems"])
                                                               for ps in presets.values() for p in ps})
    assert sum(n.startswith("deck ") for n in names) == len(list((REPO / "chapters").glob("[0-9][0-9]-*.ipynb")))
    assert any(n.startswith("link ") for n in names)
    assert all(mark == "ok  " for mark, _, _ in steps)
    assert re.search(r"^\d+ steps in \d+ s: all loaded without an error$", out, re.M)
