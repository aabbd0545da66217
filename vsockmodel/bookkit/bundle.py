"""The workshop bundle: one archive that serves the book to a room.

``python -m vsockmodel.bookkit.bundle SITE OUT --pdf PDF`` (run by
``scripts/workshop-bundle``, which builds and prints the book first) writes
``OUT/vsock-workshop-VERSION.tar.gz``::

    vsock-workshop-VERSION/
      README.md       for the instructor: the dry run, serve it, what to give the room
      serve.py        python3 serve.py --room: the book, the room page and the tally
      server/         the server's code (standard library only) and segno, for QR codes
      room/room.json  the agendas' lab presets, in order (the room page's short links)
      site/           the attendees' book: chapters, the lab, the slides, the instructor
                      part without the answer keys; NAME.gz beside what compresses
      instructor/     the answer keys, served only to the instructor's browser
      local/          the model's and simpy's wheels: the command line, offline; with
                      --wheelhouse also the notebooks and every wheel they need
      LICENSES/       the licence of everything shipped, and the book's own
      vsock-rx-book-VERSION.pdf   the printed edition, for handouts

Unpacked on a machine with Python 3 and no network, ``python3 serve.py --room``
serves the room; each attendee needs only a browser on the same network.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Optional

from .. import __version__
from ..study.quiz import CHAPTERS
from . import attendee_site, licences, roomserver
from . import serve as serve_module
from .presets import presets

REPO = Path(__file__).resolve().parents[2]
#: Build by-products that a reader never asks for.
SKIPPED = {".buildinfo", ".book-stamp", "reports", ".doctrees"}


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 10e6 else f"{n / 1e6:.1f} MB"


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def lab_download_bytes(site: Path) -> int:
    """What a browser fetches for the lab's runtime, compressed as serve.py sends it
    (Pyodide, the plotting library and the lab's own files; the page's theme comes on top)."""
    total = 0
    for folder in ("_static/vendor/pyodide", "_static/vendor/vega", "_static/lab"):
        for f in (site / folder).rglob("*"):
            if f.is_file() and f.name != "LICENSE":
                data = f.read_bytes()
                total += len(gzip.compress(data, 6)) if f.suffix in serve_module.COMPRESSED else len(data)
    return total


def _wheels(site: Path) -> list[Path]:
    """The lab's two wheels (the model and simpy): pure Python, they install anywhere."""
    return sorted((site / "_static" / "lab" / "wheels").glob("*/*.whl"))


def instructor_readme(name: str, site_bytes: int, wheel_bytes: Optional[int], lab_bytes: int,
                      pdf_name: str, wheels: list[str]) -> str:
    vsock_wheel = next((w for w in wheels if w.startswith("vsockmodel-")), "vsockmodel-*.whl")
    notebooks = (
        f"""
## Attendees who want the notebooks on their own machine

`local/wheelhouse/` holds every wheel the notebooks need ({_mb(wheel_bytes)}),
for the operating system and Python version of the machine that made this
bundle, and `local/notebooks/` the notebooks. On such a machine, with no network:

    cd local
    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links wheelhouse -r requirements.txt vsockmodel
    .venv/bin/jupyter lab notebooks/

On Windows the venv's programs are in `.venv\\Scripts\\`.
"""
        if wheel_bytes is not None
        else """
## Attendees who want the notebooks on their own machine

This bundle has no wheelhouse for them. `scripts/workshop-bundle --wheelhouse`,
run on a machine with a network and the attendees' operating system and
Python, adds one (about 220 MB), with the notebooks. Each chapter page's
download button also gives its notebook.
"""
    )
    return f"""# Workshop bundle: Small packets on the vsock receive path

This folder serves the whole book ({_mb(site_bytes)}) to a room: the chapters,
the browser lab (the model running in each attendee's browser), the slides,
the room page and a tally of the room's answers. Nothing here needs the internet.

## Before the session: the dry run

On the machine that built it, in the book's repository:

    scripts/workshop-dry-run dist/{name}.tar.gz

unpacks this bundle, serves it, opens every agenda link, deck and preset in a
headless browser with the network closed, runs each agenda problem, and
prints the time each step took.

## Serve it

    python3 serve.py --room

(Python 3.8 or newer, nothing to install.) `--room` listens on this machine's
address on the room's network and prints it, such as `http://192.168.1.20:8000/`;
without it the server answers this machine only. `--port 8080` picks another
port, `--agenda 180` the 3-hour agenda's presets, `--seeds 40` a larger room.
If attendees cannot connect, allow incoming connections to that port in the
machine's firewall.

It also prints the **instructor's link** (`/instructor/KEY`): open it on your
own machine only. It gives your browser the answer keys and the room's tally,
live; attendees' browsers get neither, and their copy of the book has no link
to the answer keys. The tally is kept in memory: download its CSV from the
instructor's page, or start the server with `--tally-csv tally.csv` to have it
written when the server stops.

## What to open

- On the projector, and for every attendee: the room page, the address the
  server printed. It shows the address with its QR code, gives each browser its
  seed (1 to 30, in turn), checks that the lab runs ("Check the lab"), and lists
  the agenda's lab presets in order, each a short link (`/p/3`) and a QR code;
  a problem's preset opens the attendee's own seed.
- The slides, one deck per chapter: `/slides/index.html`; <kbd>S</kbd> opens the
  speaker notes (expected answers, timing, where the model and the measurements differ).
- The instructor part of the book: `/book/instructor/index.html`.

Each attendee's browser downloads about {_mb(lab_bytes)} the first time it opens
the lab (the Python runtime and the model, compressed), then keeps it: a second
open, or a preset link, asks only whether the files changed.

## The command line, offline (projector demos, attendees at home)

`local/` holds the model's wheel and its one dependency (pure Python: any
system with Python 3.11 or newer). Two lines, with no network:

    python3 -m venv vsock && vsock/bin/pip install --no-index --find-links local vsockmodel
    vsock/bin/python -m vsockmodel starvation --buffer 1K --variant p1-p3 --no-headroom-check

The room page offers the same two files ({", ".join(wheels) or vsock_wheel}) for download.
{notebooks}
## Handouts

`{pdf_name}` is the book's printed edition, the same version as the site:
the chapters with every figure at its first setting, a contents list and
page numbers. It includes the instructor part and the answer keys: print the
chapters' pages for the room, not those. Its text and figures are under CC BY 4.0.

## Licences

`LICENSES/` has the licence of everything this bundle ships (Pyodide, CPython,
Vega, reveal.js, MathJax, the fonts, the Python packages whose files the pages
use, segno), with a table of what each covers, beside the book's own.

Made from the book's sources by `scripts/workshop-bundle` ({name}, {time.strftime('%Y-%m-%d')}).
"""


def local_readme(wheels: list[str]) -> str:
    return f"""# The command line, offline

{", ".join(wheels)}: the model and its one dependency, pure Python. With Python
3.11 or newer and no network, from the folder above this one:

    python3 -m venv vsock && vsock/bin/pip install --no-index --find-links local vsockmodel
    vsock/bin/python -m vsockmodel --help

See the bundle's README.md for the notebooks.
"""


def _skip(tarinfo: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
    tarinfo.uid = tarinfo.gid = 0
    tarinfo.uname = tarinfo.gname = ""
    return tarinfo


def _skip_name(name: str) -> bool:
    return name in SKIPPED or name == "__pycache__"


def _copy_site(site: Path, target: Path) -> None:
    shutil.copytree(site, target, ignore=lambda _d, names: [n for n in names if _skip_name(n)])


def precompress(site: Path) -> int:
    """Write NAME.gz beside every file that compresses (the server sends it as it is: each file is
    compressed once, here); returns how many. The .gz keeps its file's time, so the server knows
    it is current."""
    n = 0
    for f in sorted(site.rglob("*")):
        if not f.is_file() or not f.name.endswith(serve_module.COMPRESSED):
            continue
        data = f.read_bytes()
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        if len(packed) >= len(data):
            continue
        gz = f.with_name(f.name + ".gz")
        gz.write_bytes(packed)
        st = f.stat()
        os.utime(gz, ns=(st.st_atime_ns, st.st_mtime_ns))
        n += 1
    return n


def _server(stage: Path) -> None:
    """serve.py and the package it runs, with segno for the QR codes (and its licence)."""
    shutil.copyfile(serve_module.__file__, stage / "serve.py")
    (stage / "serve.py").chmod(0o755)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(roomserver.__file__).parent, stage / "server" / "roomserver", ignore=ignore)
    import segno

    shutil.copytree(Path(segno.__file__).parent, stage / "server" / "segno", ignore=ignore)
    (stage / "server" / "segno" / "LICENSE").write_text(licences.distribution_licence("segno"), encoding="utf-8")


def make_bundle(site: Path, out: Path, pdf: Path, wheelhouse: Optional[Path] = None) -> Path:
    """Write the archive, with the printed edition ``pdf``; returns its path."""
    if not (site / "index.html").is_file() or not (site / "book" / "lab.html").is_file():
        raise SystemExit(f"bundle: {site} is not a built book (no index.html or book/lab.html)")
    if not (site / "slides" / "index.html").is_file():
        raise SystemExit(f"bundle: {site} has no slides (python -m vsockmodel.bookkit.slides {site})")
    if not pdf.is_file():
        raise SystemExit(f"bundle: no printed edition at {pdf} (python -m vsockmodel.bookkit.printed)")
    if __version__ not in pdf.name:
        raise SystemExit(f"bundle: {pdf.name} is not the printed edition of version {__version__}")
    name = f"vsock-workshop-{__version__}"
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"{name}.tar.gz"
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / name
        stage.mkdir()
        _copy_site(site, stage / "site")
        attendee_site.split(stage / "site", stage / "instructor" / "site")
        wheels = _wheels(site)
        (stage / "local").mkdir()
        for w in wheels:
            shutil.copyfile(w, stage / "local" / w.name)
        wheel_names = [w.name for w in wheels]
        (stage / "local" / "README.md").write_text(local_readme(wheel_names), encoding="utf-8")
        if wheelhouse is not None:
            _copy_site(wheelhouse, stage / "local" / "wheelhouse")
            shutil.copyfile(REPO / "requirements.txt", stage / "local" / "requirements.txt")
            (stage / "local" / "notebooks").mkdir()
            for nb in [REPO / "book" / "intro.ipynb", *sorted((REPO / "chapters").glob("*.ipynb"))]:
                shutil.copyfile(nb, stage / "local" / "notebooks" / nb.name)
        (stage / "room").mkdir()
        (stage / "room" / "room.json").write_text(json.dumps(
            {"version": __version__, "chapters": list(CHAPTERS), "presets": presets()}, indent=1), encoding="utf-8")
        _server(stage)
        licences.write(stage / "site", stage / "LICENSES")
        readme = instructor_readme(name, _tree_size(stage / "site"),
                                   _tree_size(wheelhouse) if wheelhouse is not None else None,
                                   lab_download_bytes(site), pdf.name, wheel_names)
        (stage / "README.md").write_text(readme, encoding="utf-8")
        shutil.copyfile(pdf, stage / pdf.name)
        precompress(stage / "site")
        tmp_archive = archive.with_suffix(".partial")
        with tarfile.open(tmp_archive, "w:gz", compresslevel=6) as tar:
            tar.add(stage, arcname=name, filter=_skip)
        tmp_archive.replace(archive)
    return archive


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vsockmodel.bookkit.bundle", description=__doc__.split("\n")[0])
    ap.add_argument("site", type=Path, help="the built book (_build/html)")
    ap.add_argument("out", type=Path, help="the folder to write the archive into")
    ap.add_argument("--pdf", type=Path, required=True, help="the printed edition (_build/pdf/vsock-rx-book-VERSION.pdf)")
    ap.add_argument("--wheelhouse", type=Path, help="a folder of wheels to add, for local notebooks")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    archive = make_bundle(args.site, args.out, args.pdf, args.wheelhouse)
    print(f"{archive} ({_mb(archive.stat().st_size)}, in {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
