"""The workshop bundle (scripts/workshop-bundle), as an instructor would use it.

Built in the suite, unpacked in a temporary folder, served by its own serve.py
under a Python with no site-packages (the standard library only), then opened
in Chromium with the network closed: the lab starts and checks a problem, a
slide deck moves by keyboard, the instructor's agenda opens; no console error
and no request outside.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile

import pytest

from book_support import REPO, ensure_book_built
from browser_support import chromium, offline_page
from vsockmodel import __version__
from vsockmodel.study import quiz

READY_MS = 120_000


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    ensure_book_built()
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([str(REPO / "scripts" / "workshop-bundle"), "--out", str(out)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:]
    [archive] = out.glob("vsock-workshop-*.tar.gz")
    assert archive.name == f"vsock-workshop-{__version__}.tar.gz"
    room = tmp_path_factory.mktemp("room")
    with tarfile.open(archive) as tar:
        tar.extractall(room, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    [top] = room.iterdir()
    return top


def test_the_bundle_holds_the_book_its_server_and_a_readme(bundle):
    assert bundle.name == f"vsock-workshop-{__version__}"
    for path in ("README.md", "serve.py", f"vsock-rx-book-{__version__}.pdf", "site/index.html", "site/book/lab.html", "site/slides/index.html",
                 "site/book/instructor/index.html", "site/book/instructor/agendas.html"):
        assert (bundle / path).is_file(), path
    assert not (bundle / "local").exists()            # the wheelhouse only on request
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert "python3 serve.py" in readme and "/book/lab.html" in readme
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

        page.goto(served + "book/instructor/agendas.html")
        assert page.get_by_role("heading", name=re.compile("90-minute")).count() == 1
        assert page.get_by_role("heading", name=re.compile("3-hour")).count() == 1
        assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
        page.context.close()


def test_a_bundle_needs_the_printed_edition_of_its_version(tmp_path):
    from vsockmodel.bookkit.bundle import make_bundle

    site = tmp_path / "html"
    for page in ("index.html", "book/lab.html", "slides/index.html"):
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
